/**
 * The media types a job's content is served as, with the extension of its file. Anything else an
 * upstream names (text/html, image/svg+xml…) goes out as application/octet-stream: the content is
 * served from the gateway's own origin, where a browser must never run it as a page or a script.
 */
const SERVED = new Map<string, string>([
  ['video/mp4', 'mp4'],
  ['video/webm', 'webm'],
  ['video/quicktime', 'mov'],
  ['image/apng', 'png'],
  ['image/png', 'png'],
  ['image/gif', 'gif'],
  ['image/webp', 'webp'],
  ['image/jpeg', 'jpg'],
]);

export interface ServedMediaType {
  contentType: string;
  extension: string;
}

/** `type` (parameters and case ignored) if it is allowed, else application/octet-stream. */
export function servedMediaType(type: string): ServedMediaType {
  const essence = type.split(';')[0]!.trim().toLowerCase();
  const extension = SERVED.get(essence);
  return extension
    ? { contentType: essence, extension }
    : { contentType: 'application/octet-stream', extension: 'bin' };
}
