// zod compiles fast object parsers with `new Function` and probes for it when a schema is built, unless configured
// jitless first. The page's CSP forbids eval (the probe alone would be a reported violation), so this module is
// imported before anything that builds a schema.
import { config } from 'zod';

config({ jitless: true });
