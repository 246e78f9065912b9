export { MALFORMED_TEXT } from './answer.ts';
export { startFakeAnthropic } from './anthropic.ts';
export { startFakeOpenAI } from './openai.ts';
export {
  DEFAULT_KNOBS,
  FAKE_API_KEY,
  type FakeKnobs,
  type FakeUpstream,
  type SeenRequest,
} from './server.ts';
