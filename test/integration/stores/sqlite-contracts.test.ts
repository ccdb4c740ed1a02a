// Runs every store contract suite against the SQLite implementation on real files in temp dirs,
// through the adapter that presents the synchronous stores in their Promise-returning form.
import { asAsyncKnowledge, asAsyncStores } from '../../../src/core/stores/async.js';
import { knowledgeStoreContract } from '../../contract/knowledge-store.case.js';
import { artifactStoreContract } from '../../contract/artifact-store.case.js';
import { eventLogContract } from '../../contract/event-log.case.js';
import { runStoreContract } from '../../contract/run-store.case.js';
import { stateStoreContract } from '../../contract/state-store.case.js';
import { storageStoreContract } from '../../contract/storage-store.case.js';
import { transcriptContract } from '../../contract/transcript.case.js';
import { openTempStores } from './temp-data-dir.js';

const open = () => Promise.resolve(asAsyncStores(openTempStores()));

eventLogContract('sqlite', open);
transcriptContract('sqlite', open);
runStoreContract('sqlite', open);
stateStoreContract('sqlite', open);
storageStoreContract('sqlite', open);
artifactStoreContract('sqlite', open);
knowledgeStoreContract('sqlite', () => {
  const stores = openTempStores();
  return Promise.resolve({ ...asAsyncStores(stores), knowledge: asAsyncKnowledge(stores.knowledge) });
});
