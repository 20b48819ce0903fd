import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { outboxMessages } from '../../src/db/schema/index.js';
import { outboxRetryJob } from '../../src/identity/jobs.js';
import {
  deliverAfterCommit,
  deliverMessage,
  deliverUndeliveredMessages,
  drainOutbox,
  enqueueMessage,
} from '../../src/identity/outbox.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { BACKENDS } from '../support/db.js';
import { freePort } from '../support/process.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp.js';
import { bearer, registerCreator, signedChallenge } from './support.js';

describe.each(BACKENDS)('outbox on %s', (backend) => {
  let t: TestApp;
  let smtp: TestSmtpServer | undefined;
  afterEach(async () => {
    await t?.close();
    await smtp?.close();
    smtp = undefined;
  });

  const message = {
    kind: 'test',
    recipient: 'someone@example.com',
    subject: 'Hello',
    body: 'Line one\nLine two',
  };

  it('delivers an abuse-contact announcement over SMTP when SMTP_URL is set', async () => {
    smtp = await startSmtpServer();
    t = await createTestApp({
      backend,
      env: { SMTP_URL: smtp.url, MAIL_FROM: 'repo402 <ops@repo402.test>' },
    });
    const creator = await registerCreator(t, { abuse_contact: 'old@example.com' });
    const res = await t.app.inject({
      method: 'PATCH',
      url: '/api/creators/me',
      headers: bearer(creator.apiKey),
      payload: {
        abuse_contact: 'new@example.com',
        step_up: await signedChallenge(t, creator.wallet, 'step_up'),
      },
    });
    expect(res.statusCode).toBe(200);
    await drainOutbox(t.ctx);
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0]).toMatchObject({ from: 'ops@repo402.test', to: ['old@example.com'] });
    expect(smtp.received[0]!.data).toContain('new@example.com');
    const [row] = await t.ctx.database.db.select().from(outboxMessages);
    expect(row).toMatchObject({ status: 'sent', attempts: 1, lastError: null });
    expect(row!.deliveredAt).not.toBeNull();
  });

  it('records a failed delivery and retries it later', async () => {
    const port = await freePort();
    t = await createTestApp({ backend, env: { SMTP_URL: `smtp://127.0.0.1:${port}` } });
    const db = t.ctx.database.db;
    const id = await enqueueMessage(db, message, t.clock.now());
    deliverAfterCommit(t.ctx, [id], t.app.log);
    await drainOutbox(t.ctx);
    const [failed] = await db.select().from(outboxMessages).where(eq(outboxMessages.id, id));
    expect(failed).toMatchObject({ status: 'failed', attempts: 1 });
    expect(failed!.lastError).toMatch(/ECONNREFUSED|connect/i);

    // Once the mail server answers, the retry delivers it.
    smtp = await startSmtpServer();
    const fixed = { ...t.ctx, config: { ...t.config, mail: { ...t.config.mail, smtpUrl: smtp.url } } };
    expect(await deliverUndeliveredMessages(fixed, t.app.log)).toBe(1);
    const [sent] = await db.select().from(outboxMessages).where(eq(outboxMessages.id, id));
    expect(sent).toMatchObject({ status: 'sent', attempts: 2, lastError: null });
    expect(smtp.received).toHaveLength(1);
  });

  it('is retried by the periodic outbox job through the job queue', async () => {
    t = await createTestApp({ backend, jobs: [outboxRetryJob] });
    const db = t.ctx.database.db;
    // Written but never delivered, as when a process stops between commit and delivery.
    const id = await enqueueMessage(db, message, t.clock.now());
    await t.ctx.jobs!.send(outboxRetryJob, {});
    const deadline = Date.now() + 15_000;
    let row: typeof outboxMessages.$inferSelect | undefined;
    do {
      await new Promise((resolve) => setTimeout(resolve, 50));
      [row] = await db.select().from(outboxMessages).where(eq(outboxMessages.id, id));
    } while (row?.status !== 'logged' && Date.now() < deadline);
    expect(row).toMatchObject({ status: 'logged', attempts: 1 });
  });

  it('delivers a message once even when two deliverers race for it', async () => {
    smtp = await startSmtpServer();
    t = await createTestApp({ backend, env: { SMTP_URL: smtp.url } });
    const id = await enqueueMessage(t.ctx.database.db, message, t.clock.now());
    await Promise.all([deliverMessage(t.ctx, id, t.app.log), deliverMessage(t.ctx, id, t.app.log)]);
    expect(smtp.received).toHaveLength(1);
    // A delivered message is not delivered again.
    await deliverMessage(t.ctx, id, t.app.log);
    expect(await deliverUndeliveredMessages(t.ctx, t.app.log)).toBe(0);
    expect(smtp.received).toHaveLength(1);
  });

  it('gives up after five failed attempts', async () => {
    t = await createTestApp({ backend, env: { SMTP_URL: `smtp://127.0.0.1:${await freePort()}` } });
    const db = t.ctx.database.db;
    const id = await enqueueMessage(db, message, t.clock.now());
    for (let i = 0; i < 5; i++) await deliverUndeliveredMessages(t.ctx, t.app.log);
    const [row] = await db.select().from(outboxMessages).where(eq(outboxMessages.id, id));
    expect(row).toMatchObject({ status: 'failed', attempts: 5 });
    expect(await deliverUndeliveredMessages(t.ctx, t.app.log)).toBe(0);
  });
});
