// The role table is the service's own (src/domain/role-table.ts, a pure leaf): the app shows a control only where the
// service would allow the action, from the same code.
export { allows, mayChangeRole, mayRemove, ROLES } from '../../../src/domain/role-table.ts';
