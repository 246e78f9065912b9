import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildCrds } from './crds.ts';
import { structuralProblems } from './json-schema.ts';
import { renderCrdFiles } from './render.ts';

const root = join(import.meta.dirname, '..', '..', '..');

describe('generated CRDs', () => {
  const files = renderCrdFiles();

  it.each(Object.keys(files))('committed crds/%s and the chart copy match the generator (run make crds)', (file) => {
    for (const dir of ['crds', 'charts/scriptorium-operator/crds']) {
      expect(readFileSync(join(root, dir, file), 'utf8'), `${dir}/${file} is stale: run make crds`).toBe(files[file]);
    }
  });

  it('has no $ref and no additionalProperties beside properties', () => {
    for (const [file, crd] of Object.entries(buildCrds())) {
      expect(structuralProblems(crd), file).toEqual([]);
    }
  });

  it('every schema node declares a type (structural), except int-or-string', () => {
    const untyped: string[] = [];
    const walk = (node: Record<string, unknown>, path: string) => {
      if (!('type' in node) && !node['x-kubernetes-int-or-string']) untyped.push(path);
      const props = node.properties as Record<string, Record<string, unknown>> | undefined;
      for (const [k, v] of Object.entries(props ?? {})) walk(v, `${path}.${k}`);
      if (node.items) walk(node.items as Record<string, unknown>, `${path}[]`);
      if (node.additionalProperties && typeof node.additionalProperties === 'object')
        walk(node.additionalProperties as Record<string, unknown>, `${path}{}`);
    };
    for (const [file, text] of Object.entries(files)) {
      const crd = parse(text);
      walk(crd.spec.versions[0].schema.openAPIV3Schema, file);
    }
    expect(untyped).toEqual([]);
  });

  it('declares the LedgerCluster scale subresource, short names and CEL rules', () => {
    const lc = parse(files['scriptorium.dev_ledgerclusters.yaml']!);
    const version = lc.spec.versions[0];
    expect(version.subresources.scale).toEqual({
      specReplicasPath: '.spec.validators',
      statusReplicasPath: '.status.validators',
      labelSelectorPath: '.status.selector',
    });
    expect(lc.spec.names.shortNames).toEqual(['lc']);
    const rules = JSON.stringify(version.schema.openAPIV3Schema.properties.spec);
    expect(rules).toContain('genesis is immutable once set');
    expect(rules).toContain('validators must be at least 1');
    expect(rules).toContain('tls.mode mutual requires');
    const ts = parse(files['scriptorium.dev_translationservices.yaml']!);
    expect(ts.spec.names.shortNames).toEqual(['ts']);
    expect(ts.spec.versions[0].subresources).toEqual({ status: {} });
    expect(JSON.stringify(ts.spec.versions[0].schema)).toContain('self.minReplicas <= self.maxReplicas');
  });
});
