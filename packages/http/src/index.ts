// The HTTP layer of both fastify services (README.md).
export { ErrorBody, HttpError } from './errors.ts';
export { clientErrorMessage, type ErrorPluginOptions, errors } from './errors-plugin.ts';
export { clientErrorHandler, frameworkErrors, MAX_HEADER_BYTES, MAX_PARAM_LENGTH } from './framework-errors.ts';
export { buildOpenApi, type OpenApiInfo } from './openapi.ts';
export { openapi, serveOpenApi } from './openapi-plugin.ts';
export { type Body, type ResponseSpec, type RouteSpec, route } from './route-spec.ts';
export { DUPLICATE_IDS, hasUniqueIds, UNIQUE_IDS } from './unique-ids.ts';
export { describeIssue, serializerCompiler, validatorCompiler } from './zod-compilers.ts';
