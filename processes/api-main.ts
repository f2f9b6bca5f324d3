/** Production API process (no worker). Needs TEMPORAL_ADDRESS and, to share data with workers, DATABASE_URL. */
import { startSplitProcess } from './split-process';

void startSplitProcess('api');
