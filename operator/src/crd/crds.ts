import type { z } from 'zod';
import {
  GROUP,
  LC_KIND,
  LC_PLURAL,
  ledgerClusterSpec,
  ledgerClusterStatus,
  TS_KIND,
  TS_PLURAL,
  translationServiceSpec,
  translationServiceStatus,
  VERSION,
} from '../api/index.ts';
import { type SchemaNode, toStructuralSchema } from './json-schema.ts';

interface CrdInput {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  spec: z.ZodType;
  status: z.ZodType;
  printerColumns: SchemaNode[];
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath: string };
  maxNameLength: number;
}

const readyColumn = {
  name: 'Ready',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
};
const reasonColumn = {
  name: 'Reason',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
  priority: 1,
};
const ageColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

function crd(input: CrdInput): SchemaNode {
  const subresources: SchemaNode = { status: {} };
  if (input.scale) subresources.scale = input.scale;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${input.plural}.${GROUP}`,
      labels: { 'app.kubernetes.io/part-of': 'scriptorium' },
    },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: {
        kind: input.kind,
        listKind: `${input.kind}List`,
        plural: input.plural,
        singular: input.singular,
        shortNames: input.shortNames,
        categories: ['scriptorium'],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources,
          additionalPrinterColumns: input.printerColumns,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: `${input.kind} (generated from operator/src/api by make crds; do not edit).`,
              required: ['spec'],
              'x-kubernetes-validations': [
                {
                  rule: `self.metadata.name.size() <= ${input.maxNameLength}`,
                  message: `metadata.name must be at most ${input.maxNameLength} characters (child object names add suffixes)`,
                },
              ],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: toStructuralSchema(input.spec),
                status: toStructuralSchema(input.status),
              },
            },
          },
        },
      ],
    },
  };
}

/** The CustomResourceDefinitions of both kinds, as plain objects (file name → object). */
export function buildCrds(): Record<string, SchemaNode> {
  return {
    [`${GROUP}_${TS_PLURAL}.yaml`]: crd({
      kind: TS_KIND,
      plural: TS_PLURAL,
      singular: 'translationservice',
      shortNames: ['ts'],
      maxNameLength: 42,
      spec: translationServiceSpec,
      status: translationServiceStatus,
      printerColumns: [
        { name: 'Image', type: 'string', jsonPath: '.spec.image', priority: 1 },
        { name: 'Replicas', type: 'integer', jsonPath: '.status.replicas' },
        { name: 'Available', type: 'integer', jsonPath: '.status.readyReplicas' },
        readyColumn,
        reasonColumn,
        { name: 'URL', type: 'string', jsonPath: '.status.url' },
        ageColumn,
      ],
    }),
    [`${GROUP}_${LC_PLURAL}.yaml`]: crd({
      kind: LC_KIND,
      plural: LC_PLURAL,
      singular: 'ledgercluster',
      shortNames: ['lc'],
      maxNameLength: 40,
      spec: ledgerClusterSpec,
      status: ledgerClusterStatus,
      scale: {
        specReplicasPath: '.spec.validators',
        statusReplicasPath: '.status.validators',
        labelSelectorPath: '.status.selector',
      },
      printerColumns: [
        { name: 'Validators', type: 'integer', jsonPath: '.spec.validators' },
        { name: 'Active', type: 'integer', jsonPath: '.status.activeValidators' },
        { name: 'Quorum', type: 'integer', jsonPath: '.status.quorum', priority: 1 },
        { name: 'Height', type: 'integer', jsonPath: '.status.height' },
        { name: 'TLS', type: 'string', jsonPath: '.spec.tls.mode', priority: 1 },
        readyColumn,
        reasonColumn,
        ageColumn,
      ],
    }),
  };
}
