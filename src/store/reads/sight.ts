// Who may see what: an API key's account, the projects an account sees, a run group's project.
import type { ReadStore } from '../read-store';

const KEY_ACCOUNT = `SELECT account_id FROM api_keys
  WHERE key_sha256 = ? AND v_at IS NOT NULL AND revoked_at IS NULL AND account_id IS NOT NULL`;

/** The account of a key, looked up by the key's SHA-256 only; null for unknown or revoked keys. */
export function accountForKeyHash(store: ReadStore, keySha256: string): string | null {
  return store.value<string>(KEY_ACCOUNT, keySha256) ?? null;
}

/** The project, when the account owns it or it is shared with it; never a deleted one (as catalog.ts VISIBLE_PROJECTS). */
const PROJECT_VISIBLE = `SELECT 1 FROM projects p
  WHERE p.id = @project AND p.deleted = 0 AND p.name IS NOT NULL AND (p.company_id = @account
    OR EXISTS (SELECT 1 FROM project_access g WHERE g.project_id = p.id AND g.account_id = @account AND g.granted = 1))`;

export function projectVisible(store: ReadStore, accountId: string, projectId: string): boolean {
  return store.value<number>(PROJECT_VISIBLE, { account: accountId, project: projectId }) === 1;
}

const GROUP_PROJECT = 'SELECT project_id FROM run_groups WHERE id = ? AND started_at IS NOT NULL';

/** The project of a run group that has started; null when unknown. */
export function runGroupProject(store: ReadStore, runGroupId: string): string | null {
  return store.value<string>(GROUP_PROJECT, runGroupId) ?? null;
}
