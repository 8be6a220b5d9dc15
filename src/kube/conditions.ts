// Status conditions as Kubernetes API conventions define them (metav1.Condition). Pure:
// the caller passes the time, so an unchanged condition yields an identical array and the
// status patch that follows writes nothing.
import { plainTextWithin } from '../plain-text.js';
import type { Condition } from './kube-object.js';

export type { Condition } from './kube-object.js';

export type ConditionStatus = Condition['status'];

/** A condition as a controller states it; the transition time is derived. */
export type ConditionInput = Omit<Condition, 'lastTransitionTime'>;

const reasonPattern = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const maxMessageLength = 32_768;

/** metav1.Time's wire format: RFC 3339 in UTC, whole seconds. */
export function formatTime(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}

/**
 * The conditions with `input` set: added if new, otherwise updated in place.
 * `lastTransitionTime` becomes `now` only when the status changes (or the condition is new).
 */
export function setCondition(conditions: readonly Condition[] | undefined, input: ConditionInput, now: Date): Condition[] {
  if (!reasonPattern.test(input.reason)) throw new Error(`condition ${input.type}: reason "${input.reason}" must be CamelCase`);
  // Messages quote what users wrote (`kubectl describe` prints them to terminals): no controls.
  const message = plainTextWithin(input.message, maxMessageLength);
  const list = [...(conditions ?? [])];
  const index = list.findIndex((c) => c.type === input.type);
  const previous = index >= 0 ? list[index] : undefined;
  const next: Condition = {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message,
    ...(input.observedGeneration === undefined ? {} : { observedGeneration: input.observedGeneration }),
    lastTransitionTime: previous && previous.status === input.status ? previous.lastTransitionTime : formatTime(now),
  };
  if (index >= 0) list[index] = next;
  else list.push(next);
  return list;
}

/** The conditions without the one of this type. */
export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}
