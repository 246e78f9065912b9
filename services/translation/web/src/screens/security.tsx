// The account's security and data: MFA enrolment (a QR code drawn here, the secret to type by hand, then a code to
// verify), the privacy export (a JSON download) and account deletion (typed confirmation).
import { useId, useState } from 'preact/hooks';
import { mfaEnroll, mfaVerify, privacyDelete, privacyExport } from '../api/endpoints.ts';
import type { PrivacyDeleteResult } from '../api/types.ts';
import { CodeField } from '../components/code-field.tsx';
import { ConfirmDialog } from '../components/confirm-dialog.tsx';
import { Notice } from '../components/notice.tsx';
import { QrCode } from '../components/qr-code.tsx';
import { SubmitRow } from '../components/submit-row.tsx';
import { formatTime } from '../lib/format.ts';
import { useAction } from '../lib/use-action.ts';
import { useSession } from '../session.tsx';

/** What the person types to confirm deleting their account. */
export const DELETE_CONFIRMATION = 'delete my account';

function Mfa() {
  const session = useSession();
  const id = useId();
  const [enrolment, setEnrolment] = useState<{ secret: string; otpauthUri: string } | null>(null);
  const [code, setCode] = useState('');
  const { busy, message, run, submit } = useAction('mfa');

  const enroll = () =>
    run(async () => {
      const r = await mfaEnroll();
      if ('secret' in r) setEnrolment(r);
    });
  const verify = submit(async () => {
    await mfaVerify(code.trim());
    setEnrolment(null);
    setCode('');
    await session.refresh();
    return 'Two-factor authentication is on.';
  });

  return (
    <section class="card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Two-factor authentication</h2>
      {session.me.mfaEnabled ? (
        <p>
          <strong>On.</strong> Creating or revoking a key and deleting the account ask for a code when this session has
          not passed one in the last 12 hours
          {session.me.mfaVerifiedAt ? ` (last check ${formatTime(session.me.mfaVerifiedAt)})` : ''}.
        </p>
      ) : (
        <p>
          <strong>Off.</strong> Turn it on to protect your keys and account with a code from an authenticator app
          (TOTP).
        </p>
      )}
      {!enrolment && !session.me.mfaEnabled && (
        <button type="button" onClick={enroll} disabled={busy}>
          Set up two-factor authentication
        </button>
      )}
      {enrolment && (
        <div class="stack">
          <p>Scan this code with your authenticator app, or type the secret into it.</p>
          <QrCode text={enrolment.otpauthUri} label="QR code of the authenticator secret" />
          <p>
            Secret:{' '}
            <code id={`${id}-secret`} class="secret">
              {enrolment.secret}
            </code>
          </p>
          <form onSubmit={verify} class="stack">
            <CodeField label="The 6-digit code the app shows" value={code} onInput={setCode} />
            <SubmitRow disabled={busy}>Verify and turn on</SubmitRow>
          </form>
        </div>
      )}
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
    </section>
  );
}

function Privacy() {
  const session = useSession();
  const id = useId();
  const [confirming, setConfirming] = useState(false);
  const [deleted, setDeleted] = useState<PrivacyDeleteResult | null>(null);
  const { busy, message, run } = useAction('session');

  const exportData = () =>
    run(async () => {
      const { blob, fileName } = await privacyExport();
      const url = URL.createObjectURL(blob);
      const a = document.createElement('a');
      a.href = url;
      a.download = fileName ?? 'scriptorium-export.json';
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      return `Your data is downloaded as ${a.download}.`;
    });
  const deleteAccount = () => {
    setConfirming(false);
    return run(async () => {
      setDeleted(await session.withStepUp(privacyDelete));
    });
  };

  if (deleted) {
    const p = deleted.plan;
    return (
      <section class="card" aria-labelledby={`${id}-done`}>
        <h2 id={`${id}-done`}>Your account is deleted</h2>
        <ul>
          <li>Organizations passed to another member: {p.transferredOrganizations.length}</li>
          <li>Organizations deleted: {p.deletedOrganizations.length}</li>
          <li>Organizations left: {p.leftOrganizations.length}</li>
          <li>
            Keys revoked: {p.revokedKeys}; sessions ended: {p.endedSessions}
          </li>
          <li>Audit entries kept under a pseudonym: {p.keptAuditEntries}</li>
        </ul>
        <button type="button" onClick={() => session.ended()}>
          Done
        </button>
      </section>
    );
  }
  return (
    <section class="card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Your data</h2>
      <p>
        Download everything the service holds about you (profile, memberships, keys’ metadata, usage, audit entries) as
        JSON, or delete your account. Deleting passes organizations you own with other members to their longest-standing
        admin, deletes your personal organization, revokes your keys and sessions at once, and keeps the audit trail
        under a pseudonym.
      </p>
      <div class="actions">
        <button type="button" class="secondary" onClick={exportData} disabled={busy}>
          Download my data
        </button>
        <button type="button" class="danger" onClick={() => setConfirming(true)} disabled={busy}>
          Delete my account
        </button>
      </div>
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      {confirming && (
        <ConfirmDialog
          title="Delete your account?"
          confirmLabel="Delete my account"
          typed={DELETE_CONFIRMATION}
          danger
          onCancel={() => setConfirming(false)}
          onConfirm={deleteAccount}
        >
          <p>This cannot be undone. You are signed out and your keys stop working at once.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}

export function Security() {
  return (
    <>
      <h1>Security and data</h1>
      <Mfa />
      <Privacy />
    </>
  );
}
