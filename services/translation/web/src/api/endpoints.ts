// One typed function per route the app calls.
import { call } from './client.ts';
import type { PlaygroundRequest, PlaygroundResponse, TranslateBatch, TranslateResult } from './types.ts';

export const playground = (body: PlaygroundRequest, signal?: AbortSignal) =>
  call<PlaygroundResponse>('POST', '/api/v1/playground', body, signal ? { signal } : {});

export const translate = (apiKey: string, body: TranslateBatch) =>
  call<TranslateResult>('POST', '/api/v1/translate', body, { apiKey });
