/**
 * `npm run bench:report`: rewrites bench/results/latest.md and the benchmark block of docs/benchmarks.md
 * from the existing bench/results/latest.json, without running the benchmark (e.g. after editing
 * bench/report.ts).
 * BENCH_ARCHIVE=1 also keeps the run's dated copies.
 */
import fs from 'node:fs';
import path from 'node:path';
import { RESULTS_DIR, writeReportFiles, type BenchReport } from './report';

try {
  const source = path.join(RESULTS_DIR, 'latest.json');
  const report = JSON.parse(fs.readFileSync(source, 'utf8')) as BenchReport;
  for (const file of writeReportFiles(report))
    process.stderr.write(`[bench] written to ${path.relative(process.cwd(), file) || file}\n`);
} catch (error) {
  process.stderr.write(`[bench] report failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
