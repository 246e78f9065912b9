// The wire types the app uses, derived from the service's own zod schemas (type-only imports: no zod in the bundle).
// Requests are the schemas' input types, answers their output types.
import type { z } from 'zod';
import type * as S from '../../../src/http/schemas.ts';

export type PlaygroundRequest = z.input<typeof S.PlaygroundRequest>;
export type PlaygroundResponse = z.output<typeof S.PlaygroundResponse>;
export type TranslateBatch = z.input<typeof S.TranslateBatch>;
export type TranslateResult = z.output<typeof S.TranslateResult>;

export type Role = z.output<typeof S.Role>;
export type Me = z.output<typeof S.Me>;
export type Organization = z.output<typeof S.Organization>;
export type Member = z.output<typeof S.Member>;
export type InviteRequest = z.input<typeof S.InviteRequest>;
export type Invite = z.output<typeof S.Invite>;
export type InviteCreated = z.output<typeof S.InviteCreated>;
export type KeyIssueRequest = z.input<typeof S.KeyIssueRequest>;
export type KeyIssued = z.output<typeof S.KeyIssued>;
export type ApiKeyView = z.output<typeof S.ApiKeyView>;
export type ReviewStatus = z.output<typeof S.ReviewStatus>;
export type ReviewItem = z.output<typeof S.ReviewItem>;
export type ReviewAction = z.input<typeof S.ReviewAction>;
export type MfaResult = z.output<typeof S.MfaResult>;
export type Usage = z.output<typeof S.Usage>;
export type MemoryStatus = z.output<typeof S.MemoryStatus>;
export type PrivacyDeleteResult = z.output<typeof S.PrivacyDeleteResult>;
