// Every query of the Grafana dashboards (deploy/monitoring/*.json) and of the chart's alert rules
// (charts/scriptorium-operator/files/prometheus-rules.yaml) names only metrics the code exports: the names are
// taken from the real registries the operator, the ledger node and the translation service build.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createMetrics as ledgerMetrics } from '@scriptorium/ledger-node';
import { createMetrics as operatorMetrics } from '@scriptorium/operator';
import { createMetrics as translationMetrics } from '@scriptorium/translation';
import type { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const here = import.meta.dirname;
const rulesFile = join(here, '../../charts/scriptorium-operator/files/prometheus-rules.yaml');

/** The series names a registry exposes: counters and gauges as named, histograms with _bucket, _sum, _count. */
async function exported(registry: Registry): Promise<Set<string>> {
  const names = new Set<string>();
  for (const m of await registry.getMetricsAsJSON()) {
    names.add(m.name);
    const type = String(m.type);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(`${m.name}${s}`);
    if (type === 'summary') for (const s of ['_sum', '_count']) names.add(`${m.name}${s}`);
  }
  return names;
}

async function allExported(): Promise<Set<string>> {
  const sets = await Promise.all([
    exported(operatorMetrics(undefined, { defaults: true }).registry),
    exported(ledgerMetrics({ defaultMetrics: true }).registry),
    exported(translationMetrics(true).registry),
  ]);
  return new Set(sets.flatMap((s) => [...s]));
}

/** Metric names a PromQL expression refers to (the project's metrics all start `scriptorium_`). */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\bscriptorium_[a-zA-Z0-9_]+/g)].map((m) => m[0]);
}

interface Panel {
  id: number;
  title: string;
  targets?: Array<{ expr: string }>;
}

const dashboards = readdirSync(here)
  .filter((f) => f.endsWith('.json'))
  .map((f) => ({ file: f, json: JSON.parse(readFileSync(join(here, f), 'utf8')) }));

function dashboardQueries(json: { panels: Panel[]; templating?: { list: Array<{ definition?: string }> } }) {
  const queries = json.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: p.title, expr: t.expr })));
  for (const v of json.templating?.list ?? [])
    if (v.definition) queries.push({ where: 'variable', expr: v.definition });
  return queries;
}

function ruleQueries() {
  const rules = parse(readFileSync(rulesFile, 'utf8')) as {
    groups: Array<{ name: string; rules: Array<{ alert: string; expr: string }> }>;
  };
  return rules.groups.flatMap((g) => g.rules.map((r) => ({ where: r.alert, expr: r.expr })));
}

describe('monitoring', () => {
  it('has a dashboard for the ledger, the translation service and the operator', () => {
    expect(dashboards.map((d) => d.file).sort()).toEqual(['ledger.json', 'operator.json', 'translation.json']);
    for (const { json } of dashboards) {
      expect(json.uid).toMatch(/^scriptorium-/);
      expect(new Set(json.panels.map((p: Panel) => p.id)).size).toBe(json.panels.length);
      for (const p of json.panels as Panel[]) expect(p.targets?.length, p.title).toBeGreaterThan(0);
    }
  });

  it('every dashboard query and alert rule names only metrics the code exports', async () => {
    const known = await allExported();
    const unknown: string[] = [];
    const queries = [
      ...dashboards.flatMap(({ file, json }) =>
        dashboardQueries(json).map((q) => ({ ...q, where: `${file}: ${q.where}` })),
      ),
      ...ruleQueries().map((q) => ({ ...q, where: `prometheus-rules.yaml: ${q.where}` })),
    ];
    for (const q of queries) {
      const names = metricNames(q.expr);
      if (names.length === 0) unknown.push(`${q.where}: no scriptorium_ metric in ${q.expr}`);
      for (const name of names) if (!known.has(name)) unknown.push(`${q.where}: ${name}`);
    }
    expect(unknown).toEqual([]);
    // The check can fail: a name no registry exports is caught.
    expect(known.has('scriptorium_ledger_height')).toBe(true);
    expect(metricNames('rate(scriptorium_ledger_heigth[5m])').filter((n) => !known.has(n))).toEqual([
      'scriptorium_ledger_heigth',
    ]);
  });

  it('alert rules cover the day-2 cases, each with a severity and a summary', () => {
    const rules = parse(readFileSync(rulesFile, 'utf8')) as {
      groups: Array<{
        rules: Array<{ alert: string; labels: { severity: string }; annotations: { summary: string } }>;
      }>;
    };
    const alerts = rules.groups.flatMap((g) => g.rules);
    expect(alerts.map((a) => a.alert).sort()).toEqual([
      'ScriptoriumLedgerBackupBehind',
      'ScriptoriumLedgerBackupNotVerified',
      'ScriptoriumLedgerQuorumAtRisk',
      'ScriptoriumLedgerRoundChangeStorm',
      'ScriptoriumLedgerStalled',
      'ScriptoriumLedgerUnwitnessed',
      'ScriptoriumLedgerValidatorDown',
      'ScriptoriumOperatorNoLeader',
      'ScriptoriumOperatorReconcileErrors',
      'ScriptoriumTranslation5xxRate',
      'ScriptoriumTranslationBudgetExhaustion',
    ]);
    for (const a of alerts) {
      expect(['warning', 'critical'], a.alert).toContain(a.labels.severity);
      expect(a.annotations.summary, a.alert).toBeTruthy();
    }
  });
});
