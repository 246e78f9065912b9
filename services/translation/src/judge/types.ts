import type { GlossaryEntry, Style, ValidationIssue } from '../language/index.ts';

export interface JudgeItem {
  id: string;
  source: string;
  target: string;
  isIcu?: boolean;
  context?: string;
}

export interface JudgeInput {
  sourceLocale: string;
  targetLocale: string;
  items: JudgeItem[];
  glossary: GlossaryEntry[];
  style?: Style;
  /** Model asked to judge (ignored by the heuristic judge, which reports `heuristic-validators`). */
  model: string;
}

/** 0–5 each, 5 = no error found in that dimension. */
export interface JudgeScores {
  accuracy: number;
  fluency: number;
  terminology: number;
  style: number;
  localeConventions: number;
}

export type MqmSeverity = 'minor' | 'major' | 'critical';
export type MqmCategory = keyof JudgeScores;

export interface MqmError {
  itemId?: string;
  category: MqmCategory;
  severity: MqmSeverity;
  /** Short description, as the judge gave it (truncated to 200 characters). */
  description: string;
}

export interface JudgeResult {
  scores: JudgeScores;
  /** Mean of the five scores, rounded to one decimal. */
  overall: number;
  judge: 'llm' | 'heuristic';
  model: string;
  tokensIn: number;
  tokensOut: number;
  /** Validator issues found on the items (both judges run the validators). */
  issues: ValidationIssue[];
  /** The MQM error annotations the scores were derived from. */
  errors: MqmError[];
}
