/** Production worker process (no API). Needs TEMPORAL_ADDRESS and DATABASE_URL (shared with the API). */
import { startSplitProcess } from './split-process';

void startSplitProcess('worker');
