import { z } from 'zod';

/** A JSON schema node as Kubernetes' structural OpenAPI v3 subset accepts it. */
export type SchemaNode = { [key: string]: unknown };

const SAFE_INT = Number.MAX_SAFE_INTEGER;

/**
 * Turns a zod schema into a Kubernetes structural schema: every `$ref` inlined, `additionalProperties: false`
 * dropped where `properties` sits beside it, no `$schema`, int-or-string unions collapsed, and the
 * ±MAX_SAFE_INTEGER bounds zod adds to integers removed.
 *
 * @example toStructuralSchema(z.object({ a: z.string() })) // { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }
 */
export function toStructuralSchema(schema: z.ZodType): SchemaNode {
  const raw = z.toJSONSchema(schema, {
    target: 'openapi-3.0',
    io: 'input',
    reused: 'inline',
    cycles: 'throw',
    unrepresentable: 'throw',
  }) as SchemaNode;
  const defs = (raw.$defs ?? raw.definitions ?? {}) as Record<string, SchemaNode>;
  return clean(raw, defs, 0);
}

function clean(node: SchemaNode, defs: Record<string, SchemaNode>, depth: number): SchemaNode {
  if (depth > 64) throw new Error('schema nesting too deep (a cycle?)');
  if (typeof node.$ref === 'string') {
    const name = node.$ref.replace(/^#\/(\$defs|definitions)\//, '');
    const target = defs[name];
    if (!target) throw new Error(`unresolvable $ref ${node.$ref}`);
    const { $ref: _ref, ...rest } = node;
    return clean({ ...target, ...rest }, defs, depth + 1);
  }
  if (node['x-kubernetes-int-or-string'] === true) {
    const out: SchemaNode = { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] };
    if (node.default !== undefined) out.default = node.default;
    if (typeof node.description === 'string') out.description = node.description;
    return out;
  }
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$schema' || key === '$defs' || key === 'definitions' || key === 'id' || key === '$id') continue;
    if (key === 'additionalProperties' && value === false) continue;
    if ((key === 'minimum' && value === -SAFE_INT) || (key === 'maximum' && value === SAFE_INT)) continue;
    if (key === 'properties' && value && typeof value === 'object') {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, SchemaNode>).map(([k, v]) => [k, clean(v, defs, depth + 1)]),
      );
    } else if ((key === 'items' || key === 'additionalProperties') && value && typeof value === 'object') {
      out[key] = clean(value as SchemaNode, defs, depth + 1);
    } else if ((key === 'anyOf' || key === 'oneOf' || key === 'allOf') && Array.isArray(value)) {
      out[key] = value.map((v: SchemaNode) => clean(v, defs, depth + 1));
    } else {
      out[key] = value;
    }
  }
  if (out.additionalProperties !== undefined && out.properties !== undefined) delete out.additionalProperties;
  if (Array.isArray(out.required) && out.required.length === 0) delete out.required;
  return out;
}

/** Every `$ref`, and every `additionalProperties` beside `properties`, left in a schema tree (for tests). */
export function structuralProblems(node: unknown, path = '$'): string[] {
  if (!node || typeof node !== 'object') return [];
  const problems: string[] = [];
  const record = node as SchemaNode;
  if ('$ref' in record) problems.push(`${path}: $ref`);
  if ('properties' in record && 'additionalProperties' in record) problems.push(`${path}: additionalProperties`);
  for (const [key, value] of Object.entries(record)) problems.push(...structuralProblems(value, `${path}.${key}`));
  return problems;
}
