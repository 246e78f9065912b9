export { type BackupInput, type BackupResult, objectKey, readManifest, runBackup } from './backup.ts';
export { type BackupCommand, runBackupCommand } from './commands.ts';
export { type BackupConfig, loadBackupConfig } from './config.ts';
export { BackupError } from './errors.ts';
export { NodeReader } from './node-reader.ts';
export {
  type DrillResult,
  drillBackup,
  holdsChain,
  type RestoreInput,
  type RestoreResult,
  restoreBackup,
} from './restore.ts';
export { S3Client, S3Error, type S3Options } from './s3-client.ts';
