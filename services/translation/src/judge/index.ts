export { estimateJudge, judgeCompletion, judgeMaxTokensOut } from './estimate.ts';
export { heuristicJudge, ISSUE_TO_MQM } from './heuristic.ts';
export { judgeTranslations } from './judge.ts';
export { MQM_CATEGORIES, MQM_WEIGHTS, scoresFromErrors } from './mqm.ts';
export { buildJudgePrompt, JUDGE_TASK, parseJudgeReply } from './prompt.ts';
export type { JudgeInput, JudgeItem, JudgeResult, JudgeScores, MqmCategory, MqmError, MqmSeverity } from './types.ts';
