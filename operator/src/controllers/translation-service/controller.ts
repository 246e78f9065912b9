import type { TranslationService } from '../../api/index.ts';
import { RESOURCES } from '../../kube/resources.ts';
import { type KubeObject, objectKey } from '../../kube/types.ts';
import { MANAGED_SELECTOR } from '../../specs/translation-service/index.ts';
import {
  Controller,
  type ControllerDefinition,
  type InformerCache,
  type ControllerOptions as RuntimeOptions,
} from '../controller-runtime.ts';
import { ownerKey, referencedSecretNames } from './predicates.ts';
import { type ReconcileDeps, reconcileTranslationService } from './reconcile.ts';

export interface ControllerOptions extends RuntimeOptions {
  token?: () => string;
}

/**
 * The TranslationService controller: the custom resource, every owned kind (mapped to the owner, so a deleted or
 * edited child is put back), and Secret metadata (a Secret that appears recovers a resource waiting for it).
 */
export const TRANSLATION_SERVICE_CONTROLLER: ControllerDefinition<ReconcileDeps> = {
  name: 'translationservice',
  resource: RESOURCES.TranslationService,
  selector: MANAGED_SELECTOR,
  ownerKey,
  watches: [
    { type: RESOURCES.Deployment },
    { type: RESOURCES.Service },
    { type: RESOURCES.Job },
    { type: RESOURCES.CronJob },
    { type: RESOURCES.PodDisruptionBudget },
    { type: RESOURCES.Ingress },
    { type: RESOURCES.HorizontalPodAutoscaler },
    // Every Secret of the namespace, metadata only: the referenced ones are the user's, not labelled by us.
    { type: RESOURCES.Secret, owned: false, metadataOnly: true, keys: secretKeys },
  ],
  reconcile: reconcileTranslationService,
};

/** Our own Secrets map to their owner; a referenced Secret maps to every TranslationService that references it. */
function* secretKeys(secret: KubeObject, cache: InformerCache): Iterable<string> {
  const owner = ownerKey(secret);
  if (owner) yield owner;
  for (const candidate of cache.list(RESOURCES.TranslationService, secret.metadata.namespace ?? '')) {
    if (referencedSecretNames(candidate as TranslationService).has(secret.metadata.name ?? ''))
      yield objectKey(candidate);
  }
}

export class TranslationServiceController extends Controller<ReconcileDeps> {
  static readonly NAME = TRANSLATION_SERVICE_CONTROLLER.name;

  constructor(options: ControllerOptions) {
    super(TRANSLATION_SERVICE_CONTROLLER, options, { token: options.token });
  }
}
