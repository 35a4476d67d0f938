import { routesProjection } from '../../projections/routes.ts';
import { studiosProjection } from '../../projections/studios.ts';
import { hasSoleWriter } from '../../shared/event-store/types.ts';
import type { GatewayContext } from '../../shared/gateway-context.ts';
import { defineService, type EnvRequirement } from '../../shared/http/action.ts';
import { EnvReader } from '../env/reader.ts';
import { anthropicCountTokensAction, anthropicMessagesAction } from './actions/anthropic.ts';
import { anthropicModelsAction, modelAction, modelsAction } from './actions/catalog.ts';
import { chatCompletionsAction } from './actions/chat-completions.ts';
import { completionsAction } from './actions/completions.ts';
import { embeddingsAction } from './actions/embeddings.ts';
import { jobContentAction, jobGetAction, videoAction } from './actions/jobs.ts';
import { asrAction, imageAction, ttsAction } from './actions/media.ts';
import {
  audioSpeechAction,
  audioTranscriptionsAction,
  imagesGenerationsAction,
} from './actions/openai-media.ts';
import { pricesListAction, pricesRemoveAction, pricesUpsertAction } from './actions/prices.ts';
import { createResponseAction, getResponseAction } from './actions/responses.ts';
import { streamAction, textAction } from './actions/text.ts';
import { usageAction } from './actions/usage.ts';
import { AiMetrics, countingRefusals } from './ai-metrics.ts';
import { budgetsProjection } from './budgets/read-model.ts';
import { type CacheStoreOptions, DEFAULT_CACHE_STUDIO_MAX_BYTES, openCacheStore } from './cache/open.ts';
import { ResponseCache } from './cache/response-cache.ts';
import { Catalog } from './catalog.ts';
import { connectionActions } from './connections/actions.ts';
import { connectedProviders } from './connections/providers.ts';
import type { AiDeps } from './deps.ts';
import { JobWorker } from './jobs/worker.ts';
import { captureActions, captureCommands } from './payloads/actions.ts';
import { PayloadCapture } from './payloads/payload-capture.ts';
import { keepPayloadRetention } from './payloads/retention.ts';
import { StudioKeys } from './payloads/studio-keys.ts';
import { PriceBook } from './prices/price-book.ts';
import { builtinAiProviders } from './providers/index.ts';
import type { Provider } from './providers/types.ts';
import { StudioRateLimits } from './rate-limits/rate-limiter.ts';
import { requestActions } from './requests/actions.ts';
import { recordingRequests } from './requests/recording.ts';
import { RefusalLog } from './requests/refusal-log.ts';
import { ResponseStore } from './responses/store.ts';
import { RouteHealth } from './routing/health.ts';
import { routeActions } from './routing/route-actions.ts';
import { RouteBook } from './routing/route-book.ts';
import { DEFAULT_UPSTREAM_OPTIONS, UpstreamClient } from './upstream.ts';
import { UsageRecorder, type UsageRecorderOptions } from './usage/recorder.ts';

export interface AiModuleOptions {
  dataDir: string;
  upstream?: UpstreamClient;
  /** For the default upstream client: let base URLs lead to link-local and metadata addresses. */
  allowPrivateUpstreams?: boolean;
  providers?: (upstream: UpstreamClient) => Provider[];
  /** How often running video jobs are polled at their upstream (default 5 s). */
  jobPollMs?: number;
  /** Benchmarks and tests only (see `UsageRecorderOptions`). */
  usage?: UsageRecorderOptions;
  /** Where the response cache keeps answers: memory of this size, or Redis. */
  cache?: CacheStoreOptions;
}

/** The `ai` service: catalog, generation in every modality, chat completions, jobs, usage. */
export function createAiModule(gw: GatewayContext, options: AiModuleOptions) {
  const upstream =
    options.upstream ??
    new UpstreamClient({
      ...DEFAULT_UPSTREAM_OPTIONS,
      allowPrivateUpstreams: options.allowPrivateUpstreams ?? false,
    });
  const providers = (options.providers ?? builtinAiProviders)(upstream);
  const env = new EnvReader(gw);
  const catalog = new Catalog(providers, env, connectedProviders(gw, upstream));
  const prices = new PriceBook(gw);
  const budgets = () => gw.projections.state(budgetsProjection);
  const metrics = new AiMetrics(gw.metrics.registry);
  const usage = new UsageRecorder(
    gw.events,
    gw.logger,
    prices,
    {
      rulesOf: (studioId) => [...(budgets().get(studioId)?.rules.values() ?? [])],
      ledgerOf: (studioId) => budgets().get(studioId)?.ledger,
    },
    {
      soleWriter: hasSoleWriter(gw.events.kind),
      observer: {
        recorded: (event) => metrics.recorded(event),
        budgetRefused: (studioId) => metrics.refused(studioId, 'budget'),
        committed: (items) => gw.metrics.groupCommitted('usage', items),
      },
      ...options.usage,
    },
  );
  const jobs = new JobWorker(gw, catalog, env, usage, options.dataDir, options.jobPollMs);
  const cache = new ResponseCache({
    store: openCacheStore(options.cache),
    studioTtlS: (studioId) => gw.projections.state(studiosProjection).get(studioId)?.cache_ttl_s ?? 0,
    studioMaxBytes: options.cache?.studioMaxBytes ?? DEFAULT_CACHE_STUDIO_MAX_BYTES,
    logger: gw.logger,
    onLookup: (status) => metrics.cacheLookup(status),
    ...(options.cache?.now ? { now: options.cache.now } : {}),
  });
  const studioKeys = new StudioKeys(gw.keys, gw.secrets);
  const recordErasure = captureCommands(gw);
  const deps: AiDeps = {
    gw,
    catalog,
    env,
    upstream,
    payloads: new PayloadCapture(gw, studioKeys),
    usage,
    limits: countingRefusals(new StudioRateLimits(gw), metrics),
    jobs,
    prices,
    cache,
    routes: new RouteBook(
      () => gw.projections.state(routesProjection),
      catalog,
      new RouteHealth(Date.now, (route, target) => metrics.cooldownStarted(route, target)),
    ),
    dataDir: options.dataDir,
    metrics,
  };

  const responses = new ResponseStore(gw.events);
  const refusals = new RefusalLog(gw.events, gw.logger);

  const declared = new Map<string, EnvRequirement>();
  for (const provider of providers) for (const e of provider.env) declared.set(e.key, e);

  const service = defineService({
    id: 'ai',
    name: 'AI',
    env: [...declared.values()],
    actions: recordingRequests(
      [
        modelsAction(deps),
        modelAction(deps),
        anthropicModelsAction(deps),
        textAction(deps),
        streamAction(deps),
        chatCompletionsAction(deps),
        completionsAction(deps),
        anthropicMessagesAction(deps),
        anthropicCountTokensAction(deps),
        createResponseAction(deps, responses),
        getResponseAction(responses),
        imageAction(deps),
        imagesGenerationsAction(deps),
        audioSpeechAction(deps),
        audioTranscriptionsAction(deps),
        ttsAction(deps),
        asrAction(deps),
        embeddingsAction(deps),
        videoAction(deps),
        jobGetAction(deps),
        jobContentAction(deps),
        usageAction(deps),
        pricesListAction(deps),
        pricesUpsertAction(deps),
        pricesRemoveAction(deps),
        ...routeActions(deps),
        ...connectionActions(deps),
        ...requestActions(deps),
      ],
      { refusals, capture: deps.payloads },
    ),
  });

  let stopLeadership = async () => {};
  return {
    service,
    catalog,
    usage,
    /** `/v1/studios/capture*` and `erase-payloads`: the studios service serves them. */
    studioActions: captureActions(gw, deps.payloads, studioKeys),
    payloads: deps.payloads,
    /** Resumes jobs a previous process left unfinished, and keeps payload retention: in one process only, its leader. */
    start() {
      const leadership = gw.singleton('video-jobs', {
        async run(signal) {
          jobs.resume();
          await new Promise<void>((resolve) =>
            signal.addEventListener('abort', () => resolve(), { once: true }),
          );
        },
      });
      const retention = keepPayloadRetention(gw, studioKeys, (studioId, keyIds) =>
        recordErasure({ type: 'RecordErasure', studioId, keyIds, reason: 'retention' }, { actor: 'gateway' }),
      );
      stopLeadership = async () => {
        await leadership.stop();
        await retention.stop();
      };
    },
    async close() {
      await stopLeadership();
      await jobs.stop();
      await usage.close();
      await refusals.close();
      await deps.payloads.close();
      await cache.close();
      await upstream.close();
    },
  };
}

export type AiModule = ReturnType<typeof createAiModule>;
