// Runs every store contract suite against the PostgreSQL implementation on the suite's private cluster:
// one database for this file, migrated once, its tables emptied before each test.
import { afterAll, beforeAll, describe } from 'vitest';
import { openPostgresStores, type PostgresStores } from '../../../src/runtime/stores/postgres/open.js';
import { artifactStoreContract } from '../../contract/artifact-store.case.js';
import { eventLogContract } from '../../contract/event-log.case.js';
import { runStoreContract } from '../../contract/run-store.case.js';
import { stateStoreContract } from '../../contract/state-store.case.js';
import { storageStoreContract } from '../../contract/storage-store.case.js';
import { transcriptContract } from '../../contract/transcript.case.js';
import { knowledgeStoreContract } from '../../contract/knowledge-store.case.js';
import { freshDatabase, postgresSkipReason, postgresUrl } from '../../helpers/postgres.js';
import { withReason } from '../../helpers/skip.js';

describe.skipIf(postgresUrl === null)(withReason('PostgreSQL stores', postgresUrl === null && postgresSkipReason), () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let stores: PostgresStores;
  beforeAll(async () => {
    database = await freshDatabase();
    stores = await openPostgresStores(database.url);
  });
  afterAll(async () => {
    await stores.close();
    await database.drop();
  });

  /** The shared stores with every lbot table emptied; closing leaves them open for the next test. */
  const open = async () => {
    const tables = await stores.db.pool.query<{ t: string }>(
      `SELECT quote_ident(tablename) AS t FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'schema_migrations'`,
    );
    await stores.db.pool.query(`TRUNCATE ${tables.rows.map((r) => r.t).join(', ')} RESTART IDENTITY CASCADE`);
    return { ...stores, close: () => undefined };
  };

  eventLogContract('postgres', open);
  transcriptContract('postgres', open);
  runStoreContract('postgres', open);
  stateStoreContract('postgres', open);
  storageStoreContract('postgres', open);
  artifactStoreContract('postgres', open);
  knowledgeStoreContract('postgres', open);
});
