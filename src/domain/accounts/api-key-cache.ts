import type { EntityManager } from '@mikro-orm/postgresql';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { SecretBox } from '../../crypto/secret-box';
import { listenForNotifications, type NotificationListener } from '../../db/notifications';
import type { Logger } from '../../logger';
import type { Principal } from './actor';
import { findApiKey, KEY_PATTERN, markApiKeyUsed } from './api-keys-service';

interface Entry {
  principal: Principal;
  keyHash: Buffer;
  cachedAt: number;
  /** When this process last recorded the key's use (api_keys.last_used_at, kept to the minute). */
  markedUsedAt: number;
}

const MINUTE_MS = 60_000;

export interface ApiKeyCacheOptions {
  databaseUrl: string;
  secretBox: SecretBox;
  logger: Logger;
  /** How long a key is trusted from memory before it is read again. */
  ttlMs?: number;
  maxEntries?: number;
}

/**
 * The API keys this process authenticated recently, by prefix, with their signing secrets opened once: most
 * requests then need no lookup and no decryption. A key's use is still recorded to the minute (last_used_at),
 * once a minute per key and process. A change of a key (revocation) is announced by PostgreSQL
 * on the channel `api_keys` and drops it here at once; while that announcement cannot be heard (the listening
 * connection is down) nothing is served from memory.
 *
 * Memory is never the last word on revocation: the statement that admits each request (admit_request) checks
 * the key again, and anything that writes before it confirms the key first (see AppState.keyConfirmed). So a
 * revoked key is refused from its next request on, by every API process, as when every request read the key.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly secrets = new WeakMap<Principal, string>();
  private listener: NotificationListener | null = null;
  /** Counts announced changes: a lookup that overlapped one does not remember what it read. */
  private changes = 0;
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(private readonly options: ApiKeyCacheOptions) {
    this.ttlMs = options.ttlMs ?? 5 * 60_000;
    this.maxEntries = options.maxEntries ?? 10_000;
  }

  async start(): Promise<void> {
    this.listener = await listenForNotifications({
      databaseUrl: this.options.databaseUrl,
      channel: 'api_keys',
      logger: this.options.logger,
      onNotification: (prefix) => {
        this.changes += 1;
        this.entries.delete(prefix);
      },
      onListening: () => {
        this.changes += 1;
        this.entries.clear();
      },
    });
  }

  async stop(): Promise<void> {
    await this.listener?.stop();
  }

  /**
   * The principal a presented key stands for, or null for a malformed, unknown or revoked key; `fromMemory`
   * says whether the database was left unasked.
   */
  async authenticate(em: EntityManager, presented: string): Promise<{ principal: Principal; fromMemory: boolean } | null> {
    const prefix = KEY_PATTERN.exec(presented)?.[1];
    if (!prefix) return null;
    const presentedHash = createHash('sha256').update(presented).digest();
    const cached = this.usable(prefix);
    if (cached) {
      if (!timingSafeEqual(cached.keyHash, presentedHash)) return null;
      if (Date.now() - cached.markedUsedAt >= MINUTE_MS) {
        cached.markedUsedAt = Date.now();
        await markApiKeyUsed(em, cached.principal.apiKeyId);
      }
      return { principal: cached.principal, fromMemory: true };
    }
    const changesBefore = this.changes;
    const found = await findApiKey(em, prefix);
    if (!found) return null;
    const keyHash = Buffer.from(found.keyHash, 'hex');
    if (!timingSafeEqual(keyHash, presentedHash)) return null;
    if (!found.recentlyUsed) await markApiKeyUsed(em, found.principal.apiKeyId);
    const now = Date.now();
    if (this.changes === changesBefore) this.remember(prefix, { principal: found.principal, keyHash, cachedAt: now, markedUsedAt: now });
    return { principal: found.principal, fromMemory: false };
  }

  /** The key's inbound signing secret, opened once per cached key. */
  signingSecret(principal: Principal): string {
    let secret = this.secrets.get(principal);
    if (secret === undefined) {
      secret = this.options.secretBox.open(principal.signingSecretSealed);
      this.secrets.set(principal, secret);
    }
    return secret;
  }

  private usable(prefix: string): Entry | undefined {
    if (!this.listener?.listening) return undefined;
    const entry = this.entries.get(prefix);
    if (entry && Date.now() - entry.cachedAt > this.ttlMs) {
      this.entries.delete(prefix);
      return undefined;
    }
    return entry;
  }

  private remember(prefix: string, entry: Entry): void {
    if (!this.listener?.listening) return;
    // Maps keep insertion order: the first key is the one cached longest ago.
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(prefix, entry);
  }
}
