// `make dev`'s curl path: prints the current TOTP code (RFC 6238, the service's settings: SHA-1, 6 digits, 30 s) of
// the base32 secret given as the argument, for `POST /api/v1/mfa {"action": "verify"}` without an authenticator app.
import { generate } from 'otplib';

const secret = process.argv[2];
if (!secret || !/^[A-Z2-7]+=*$/.test(secret)) {
  process.stderr.write('usage: node totp.ts <base32 secret from {"action":"enroll"}>\n');
  process.exit(2);
}
process.stdout.write(`${await generate({ secret })}\n`);
