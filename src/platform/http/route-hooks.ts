import type { RouteOptions } from 'fastify';

/** The request stages whose hooks a route's options list, as `onRoute` hooks see them. */
export const HOOK_STAGES = ['onRequest', 'preParsing', 'preValidation', 'preHandler'] as const;
export type HookStage = (typeof HOOK_STAGES)[number];
export type Hook = (...args: never[]) => unknown;

/** A route's hooks for one stage, as a list (a route may give one function, a list, or none). */
export function hooksOf(route: RouteOptions, stage: HookStage): Hook[] {
  const hooks = route[stage] as Hook | Hook[] | undefined;
  if (!hooks) return [];
  return Array.isArray(hooks) ? hooks : [hooks];
}

export function setHooks(route: RouteOptions, stage: HookStage, hooks: Hook[]): void {
  (route as unknown as Record<string, Hook[] | undefined>)[stage] = hooks.length > 0 ? hooks : undefined;
}

/** Runs `hook` after the hooks the route already has at `stage`. */
export function appendHook(route: RouteOptions, stage: HookStage, hook: Hook): void {
  setHooks(route, stage, [...hooksOf(route, stage), hook]);
}
