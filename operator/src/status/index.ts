export { deriveReady, getCondition, orderConditions, setCondition } from './conditions.ts';
export { nextStatus, type Status, updateStatus } from './status-writer.ts';
