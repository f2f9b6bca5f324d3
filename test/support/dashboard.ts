/** The metric names the provisioned Grafana dashboard (deploy/grafana/dashboards) queries. */
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../platform/paths';

export const DASHBOARD_PATH = path.join(projectRoot, 'deploy/grafana/dashboards/switchyard.json');

interface Dashboard {
  panels: { title: string; targets?: { expr: string }[] }[];
}

export function readDashboard(): Dashboard {
  return JSON.parse(fs.readFileSync(DASHBOARD_PATH, 'utf8')) as Dashboard;
}

/** Metric family names in the dashboard's queries (a histogram's _bucket, _count and _sum as the histogram). */
export function dashboardMetrics(): string[] {
  const names = new Set<string>();
  for (const panel of readDashboard().panels)
    for (const target of panel.targets ?? [])
      for (const [name] of target.expr.matchAll(/\b(?:switchyard|temporal)_[a-z0-9_]+/g))
        names.add(name.replace(/_(bucket|count|sum)$/, ''));
  return [...names].sort();
}
