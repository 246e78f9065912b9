export { judgeTranslations } from './judge.ts';
export type { JudgeInput, JudgeItem, JudgeResult, JudgeScores, MqmCategory, MqmError, MqmSeverity } from './types.ts';
