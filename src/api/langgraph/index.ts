// The LangGraph Agent Server protocol on /v1/deepagents: the routes it adds to the hosted ones.
// Both forms reach the same services, queue and event log; only the wire shapes differ.
import type { AppDeps } from '../../http/deps.js';
import { newRouter } from '../../http/router.js';
import { assistantRoutes } from './assistants.js';
import { langGraphRunRoutes } from './runs.js';
import { statelessRunRoutes } from './stateless.js';
import { storeRoutes } from './store.js';
import { langGraphThreadRoutes } from './threads.js';

/** Routes of the LangGraph protocol that the hosted API does not have. */
export function langGraphRoutes(deps: AppDeps) {
  return newRouter().route('/', assistantRoutes(deps)).route('/', langGraphThreadRoutes(deps)).route('/', langGraphRunRoutes(deps)).route('/', statelessRunRoutes(deps)).route('/', storeRoutes(deps));
}
