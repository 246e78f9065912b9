export { type ControllerOptions, TranslationServiceController } from './controller.ts';
export { needsReconcile, ownerKey, referencedSecretNames } from './predicates.ts';
export { FINALIZER, type ReconcileDeps, type ReconcileStats, reconcileTranslationService } from './reconcile.ts';
