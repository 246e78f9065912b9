/** A backup refused or failed: the height where it happened and why, in words a person reads. */
export class BackupError extends Error {
  readonly height: number;
  readonly reason: string;
  constructor(height: number, reason: string) {
    super(`height ${height}: ${reason}`);
    this.name = 'BackupError';
    this.height = height;
    this.reason = reason;
  }
}
