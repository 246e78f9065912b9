// Accepting an invitation: the token of the invite link (kept in this tab while signing in) is posted once the
// invitee is signed in; they then see the organization's members.
import { useState } from 'preact/hooks';
import { acceptInvite } from '../api/endpoints.ts';
import { Notice } from '../components/notice.tsx';
import { describeError } from '../lib/messages.ts';
import { href, navigate } from '../lib/router.ts';
import { clearPendingInvite, pendingInvite, useSession } from '../session.tsx';

export function Invite() {
  const session = useSession();
  const [token] = useState(pendingInvite);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!token) {
    return (
      <>
        <h1>Invitation</h1>
        <p>
          There is no invitation to accept in this tab. Open the invitation link you were sent, or go to the{' '}
          <a href={href('/')}>overview</a>.
        </p>
      </>
    );
  }
  const accept = async () => {
    setBusy(true);
    setError(null);
    try {
      const org = await acceptInvite(token);
      clearPendingInvite();
      session.selectOrg(org.id);
      await session.refresh();
      navigate('/members');
    } catch (e) {
      setError(describeError(e, 'session'));
    } finally {
      setBusy(false);
    }
  };
  const decline = () => {
    clearPendingInvite();
    navigate('/');
  };
  return (
    <>
      <h1>Invitation</h1>
      <p>
        You were invited to join an organization as <strong>{session.me.email}</strong>. Accepting makes you a member
        with the role the invitation names.
      </p>
      {error && <Notice kind="error">{error}</Notice>}
      <div class="actions">
        <button type="button" onClick={accept} disabled={busy}>
          Accept the invitation
        </button>
        <button type="button" class="secondary" onClick={decline}>
          Not now
        </button>
      </div>
    </>
  );
}
