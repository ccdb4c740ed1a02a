// Runs every store contract suite against the SQLite implementation on real files in temp dirs.
import { artifactStoreContract } from '../../contract/artifact-store.case.js';
import { eventLogContract } from '../../contract/event-log.case.js';
import { runStoreContract } from '../../contract/run-store.case.js';
import { stateStoreContract } from '../../contract/state-store.case.js';
import { storageStoreContract } from '../../contract/storage-store.case.js';
import { transcriptContract } from '../../contract/transcript.case.js';
import { openTempStores } from './temp-data-dir.js';

eventLogContract('sqlite', openTempStores);
transcriptContract('sqlite', openTempStores);
runStoreContract('sqlite', openTempStores);
stateStoreContract('sqlite', openTempStores);
storageStoreContract('sqlite', openTempStores);
artifactStoreContract('sqlite', openTempStores);
