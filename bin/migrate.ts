import type { ProcessConfig } from '../shared/config.ts';
import { migrate } from '../shared/event-store/migrations.ts';
import { redactUrl } from '../shared/event-store/redact.ts';

/** `studio db migrate`: brings DATABASE_URL's schema up to date and says what it applied. */
export async function migrateCommand(config: ProcessConfig): Promise<void> {
  if (!config.databaseUrl) {
    console.error('studio: db migrate needs DATABASE_URL (the embedded store migrates itself at start)');
    process.exitCode = 2;
    return;
  }
  // Loaded here, not with the CLI: only this command and the PostgreSQL store need them.
  const [{ default: pg }, { postgresDriver }] = await Promise.all([
    import('pg'),
    import('../shared/event-store/postgres.ts'),
  ]);
  const driver = postgresDriver(new pg.Pool({ connectionString: config.databaseUrl, max: 1 }));
  try {
    const { applied } = await migrate(driver);
    console.log(
      applied.length === 0
        ? `  ${redactUrl(config.databaseUrl)} is up to date`
        : `  applied to ${redactUrl(config.databaseUrl)}: ${applied.join(', ')}`,
    );
  } finally {
    await driver.close();
  }
}
