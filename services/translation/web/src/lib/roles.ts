// The role table is the service's own (src/services/roles.ts): the app shows a control only where the service would
// allow the action, from the same code. That module's pure functions are bundled; its database helper is not called.
export { allows, mayChangeRole, mayRemove, ROLES } from '../../../src/services/roles.ts';
