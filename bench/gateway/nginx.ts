/**
 * nginx as the floor of the gateway benchmark: what a proxy written in C adds, `proxy_pass` to the
 * mock over keep-alive upstream connections, answers not buffered (each streamed chunk passed on as
 * it comes). One process (`master_process off`, one worker), like the one Node thread of the others.
 * Not part of the repository's dependencies: when no `nginx` is installed the target is skipped and
 * the report says so (`apt-get install nginx` adds it).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Child, freePort, spawnProbed } from './processes.ts';

/** The nginx binary on PATH or in /usr/sbin, or undefined. */
export function findNginx(): string | undefined {
  for (const candidate of ['nginx', '/usr/sbin/nginx', '/usr/local/sbin/nginx']) {
    try {
      execFileSync(candidate, ['-v'], { stdio: 'ignore' });
      return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/** The configuration: loopback only, every path and temp file inside `dir`, no access log. */
export function nginxConfig(dir: string, port: number, upstream: URL): string {
  return `daemon off;
master_process off;
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${join(dir, 'client_body')};
  proxy_temp_path ${join(dir, 'proxy')};
  fastcgi_temp_path ${join(dir, 'fastcgi')};
  uwsgi_temp_path ${join(dir, 'uwsgi')};
  scgi_temp_path ${join(dir, 'scgi')};
  keepalive_requests 1000000;
  upstream mock {
    server ${upstream.host};
    keepalive 128;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://mock;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
`;
}

/** Starts nginx in front of `upstream` (the mock's origin), in `dir`. */
export async function startNginx(binary: string, dir: string, upstream: string): Promise<Child> {
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  const config = join(dir, 'nginx.conf');
  await writeFile(config, nginxConfig(dir, port, new URL(upstream)));
  const origin = `http://127.0.0.1:${port}`;
  return spawnProbed('nginx', ['-p', dir, '-c', config], {}, origin, `${origin}/`, { program: binary });
}
