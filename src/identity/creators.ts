import type { Address } from 'viem';
import type { Db } from '../db/connect.js';
import { AppError } from '../platform/errors.js';
import {
  type ChangeField,
  type ChangeRow,
  type CreatorRow,
  findClaim,
  findCreatorById,
  findCreatorRowByHandle,
  latestChangeInForce,
  listChanges,
  lockCreator,
  setCreatorSuspension,
} from './store.js';

/**
 * Locks the creator's row until the caller's transaction ends: whatever is counted then written
 * per creator (listings under the unpublished cap, release claims and stored bytes, key issuance)
 * is decided one at a time, across processes.
 */
export { lockCreator };

/** Payout address and abuse contact changes come into force this long after they are requested. */
export const CHANGE_DELAY_MS = 48 * 60 * 60 * 1000;

export interface PendingChange {
  field: ChangeField;
  value: string;
  requestedAt: Date;
  effectiveAt: Date;
}

/** A creator as of a moment: the values in force then, and the changes still to come. */
export interface CreatorView {
  id: string;
  handle: string;
  payoutAddress: Address;
  abuseContact: string;
  acceptedTermsVersion: string;
  createdAt: Date;
  pendingChanges: PendingChange[];
}

export interface CreatorRef {
  id: string;
  handle: string;
  createdAt: Date;
}

/**
 * What is in force is derived from the stored rows and the time asked about: the newest
 * uncancelled change whose `effective_at` has passed, else the registered value. No job flips it.
 */
function viewAt(creator: CreatorRow, changes: ChangeRow[], at: Date): CreatorView {
  const current: Record<ChangeField, string> = {
    payout_address: creator.payoutAddress,
    abuse_contact: creator.abuseContact,
  };
  const pendingChanges: PendingChange[] = [];
  for (const change of changes) {
    if (change.effectiveAt <= at) current[change.field] = change.value;
    else pendingChanges.push(pick(change));
  }
  return {
    id: creator.id,
    handle: creator.handle,
    payoutAddress: current.payout_address as Address,
    abuseContact: current.abuse_contact,
    acceptedTermsVersion: creator.acceptedTermsVersion,
    createdAt: creator.createdAt,
    pendingChanges,
  };
}

function pick(change: ChangeRow): PendingChange {
  return {
    field: change.field,
    value: change.value,
    requestedAt: change.requestedAt,
    effectiveAt: change.effectiveAt,
  };
}

export async function creatorView(db: Db, creatorId: string, at: Date): Promise<CreatorView | undefined> {
  const creator = await findCreatorById(db, creatorId);
  if (!creator) return undefined;
  return viewAt(creator, await listChanges(db, creatorId), at);
}

/**
 * The address payouts for `creatorId` go to at `at`. A requested change is not in force for 48
 * hours; sweeps before then still pay the old address.
 */
export async function payoutAddressInForce(
  db: Db,
  creatorId: string,
  at: Date,
): Promise<Address | undefined> {
  return (await valueInForce(db, creatorId, 'payout_address', at)) as Address | undefined;
}

export function abuseContactInForce(db: Db, creatorId: string, at: Date): Promise<string | undefined> {
  return valueInForce(db, creatorId, 'abuse_contact', at);
}

async function valueInForce(db: Db, creatorId: string, field: ChangeField, at: Date) {
  const change = await latestChangeInForce(db, creatorId, field, at);
  if (change) return change.value;
  const creator = await findCreatorById(db, creatorId);
  if (!creator) return undefined;
  return field === 'payout_address' ? creator.payoutAddress : creator.abuseContact;
}

/** The creator whose payout address in force at `at` is `address` (an address names at most one). */
export async function findCreatorByPayoutAddress(
  db: Db,
  address: Address,
  at: Date,
): Promise<CreatorRef | undefined> {
  const creatorId = await findClaim(db, address);
  if (!creatorId) return undefined;
  const view = await creatorView(db, creatorId, at);
  if (!view || view.payoutAddress.toLowerCase() !== address.toLowerCase()) return undefined;
  return { id: view.id, handle: view.handle, createdAt: view.createdAt };
}

export async function findCreatorByHandle(db: Db, handle: string): Promise<CreatorRef | undefined> {
  const row = await findCreatorRowByHandle(db, handle);
  return row && { id: row.id, handle: row.handle, createdAt: row.createdAt };
}

/** A payout address names at most one creator (docs/DECISIONS.md). */
export function addressTaken(): AppError {
  return AppError.invalid(
    [{ field: 'payout_address', reason: 'already bound to another creator' }],
    'This payout address is already bound to another creator',
  );
}

/** `403 suspended`: what the operator's suspension of a creator or a listing refuses, with its reason. */
export function suspensionError(whose: string, reason: string | null): AppError {
  return new AppError('suspended', {
    message: `${whose} suspended by the operator of this service: ${reason ?? ''}`,
    details: { reason: reason ?? '' },
  });
}

/** Refuses a suspended creator: sign-in and a new listing. */
export async function assertCreatorNotSuspended(db: Db, creatorId: string): Promise<void> {
  const creator = await findCreatorById(db, creatorId);
  if (creator?.suspendedAt)
    throw suspensionError(`The creator ${creator.handle} is`, creator.suspensionReason);
}

/** A creator by handle, for the operator's commands. */
export function creatorByHandle(db: Db, handle: string) {
  return findCreatorRowByHandle(db, handle);
}

/** The operator's suspension of a creator (or, with `null`, its end); true when it changed. */
export function setCreatorSuspended(
  db: Db,
  creatorId: string,
  suspension: { at: Date; reason: string } | null,
) {
  return setCreatorSuspension(db, creatorId, suspension);
}
