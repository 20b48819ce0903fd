import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { BASE, BASE_SEPOLIA } from '../src/platform/networks.js';

describe('loadConfig', () => {
  it('uses the embedded defaults of DESIGN.md item 15', () => {
    const config = loadConfig({});
    expect(config.port).toBe(8402);
    expect(config.sshPort).toBe(2222);
    expect(config.dataDir).toBe(path.resolve('./data'));
    expect(config.baseUrl).toBe('http://localhost:8402');
    expect(config.databaseUrl).toBeUndefined();
    expect(config.redisUrl).toBeUndefined();
    expect(config.paused).toBe(false);
    expect(config.rateLimits.registration).toEqual({ max: 5, windowSeconds: 3600 });
  });

  it('reads every documented variable', () => {
    const config = loadConfig({
      PORT: '9000',
      SSH_PORT: '2200',
      DATA_DIR: '/tmp/x',
      BASE_URL: 'https://repo402.example/',
      DATABASE_URL: 'postgres://u@h:5432/db',
      REDIS_URL: 'redis://127.0.0.1:6379',
      PAUSED: 'true',
      RATE_LIMIT_PUBLIC: '10/5',
      TRUST_PROXY: '10.0.0.0/8',
    });
    expect(config).toMatchObject({
      port: 9000,
      sshPort: 2200,
      dataDir: '/tmp/x',
      baseUrl: 'https://repo402.example',
      databaseUrl: 'postgres://u@h:5432/db',
      redisUrl: 'redis://127.0.0.1:6379',
      paused: true,
      trustProxy: '10.0.0.0/8',
    });
    expect(config.rateLimits.public).toEqual({ max: 10, windowSeconds: 5 });
  });

  it('reads TRUST_PROXY as a switch or the proxies to believe, never as a hop count', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.1,192.168.0.0/16' }).trustProxy).toBe('10.0.0.1,192.168.0.0/16');
    // A hop count would believe a client that reaches the port directly; Fastify trusts nobody for it.
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe('1');
  });

  it('derives BASE_URL from PORT when unset', () => {
    expect(loadConfig({ PORT: '9100' }).baseUrl).toBe('http://localhost:9100');
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '' }).port).toBe(8402);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['SSH_PORT', '-1'],
    ['BASE_URL', 'ftp://x'],
    ['BASE_URL', 'not a url'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'http://x'],
    ['PAUSED', 'maybe'],
    ['LOG_LEVEL', 'loud'],
    ['RATE_LIMIT_PUBLIC', '10'],
    ['RATE_LIMIT_AUTH', '0/60'],
    ['APP_SECRET', 'short'],
    ['ATTESTATION_KEY', 'ab'.repeat(31)],
    ['ATTESTATION_KEY', '-----BEGIN PRIVATE KEY-----'],
    ['EXPLORER_TX_URL', 'ftp://explorer.example/tx/{tx}'],
    ['EXPLORER_TX_URL', 'https://basescan.org/tx/'],
    ['EXPLORER_TX_URL', 'javascript:alert("{tx}")'],
  ])('refuses %s=%s with a message naming the variable', (name, value) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(`${name}=`);
    expect((error as ConfigError).problems).toHaveLength(1);
  });

  it('refuses a METRICS_PORT taken by PORT or SSH_PORT, and never shows BASE_RPC_URL (its key)', () => {
    expect(() => loadConfig({ PORT: '9100', METRICS_PORT: '9100' })).toThrow(
      /METRICS_PORT: 9100 is taken by PORT/,
    );
    expect(() => loadConfig({ SSH_PORT: '9101', METRICS_PORT: '9101' })).toThrow(/taken by SSH_PORT/);
    expect(loadConfig({ METRICS_PORT: '9102' }).metrics).toEqual({ port: 9102, host: '127.0.0.1' });
    let message = '';
    try {
      loadConfig({ BASE_RPC_URL: 'ftp://rpc.example/v2/SECRET-KEY' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/BASE_RPC_URL=\(value hidden\)/);
    expect(message).not.toContain('SECRET-KEY');
  });

  it('reads each secret from its _FILE form, refusing both forms or an unreadable file without showing the value', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'repo402-secrets-'));
    try {
      const secret = 'ab'.repeat(32);
      writeFileSync(path.join(dir, 'app-secret'), `${secret}\n`);
      writeFileSync(path.join(dir, 'cdp'), 'c2VjcmV0');
      const config = loadConfig({
        APP_SECRET_FILE: path.join(dir, 'app-secret'),
        FACILITATOR_URL: 'https://api.cdp.coinbase.com/platform/v2/x402',
        CDP_API_KEY_ID: 'organizations/o/apiKeys/k',
        CDP_API_KEY_SECRET_FILE: path.join(dir, 'cdp'),
      });
      expect(config.appSecret).toBe(secret);
      expect(config.payments.facilitatorCdpKey).toEqual({
        id: 'organizations/o/apiKeys/k',
        secret: 'c2VjcmV0',
      });

      expect(() => loadConfig({ APP_SECRET: secret, APP_SECRET_FILE: path.join(dir, 'app-secret') })).toThrow(
        'APP_SECRET_FILE: APP_SECRET is set as well; set one of them',
      );
      expect(() => loadConfig({ PAYOUT_PRIVATE_KEY_FILE: path.join(dir, 'missing') })).toThrow(
        /PAYOUT_PRIVATE_KEY_FILE: cannot read .*missing \(ENOENT\)/,
      );
      // A malformed value read from a file is refused like one set directly: named, never shown.
      writeFileSync(path.join(dir, 'bad'), 'not-hex-at-all');
      let message = '';
      try {
        loadConfig({ APP_SECRET_FILE: path.join(dir, 'bad') });
      } catch (caught) {
        message = (caught as Error).message;
      }
      expect(message).toContain('APP_SECRET=(value hidden)');
      expect(message).not.toContain('not-hex-at-all');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('never echoes a secret value, even a malformed one', () => {
    const values = {
      APP_SECRET: 'hunter2-not-hex',
      ATTESTATION_KEY: 'my-signing-seed',
      PAYOUT_PRIVATE_KEY: '0xdeadbeef',
      DATABASE_URL: 'mysql://admin:s3cret@db',
    };
    let message = '';
    try {
      loadConfig({ ...values, PAYMENTS_MODE: 'mainnet' });
    } catch (caught) {
      message = (caught as Error).message;
    }
    for (const [name, value] of Object.entries(values)) {
      expect(message).toContain(`${name}=(value hidden)`);
      expect(message).not.toContain(value);
    }
  });

  it('refuses mainnet without a chain reader: a lost settle answer is decided only by the chain', () => {
    const mainnet = {
      PAYMENTS_MODE: 'mainnet',
      FACILITATOR_URL: 'https://facilitator.example',
      PLATFORM_PAYOUT_ADDRESS: `0x${'22'.repeat(20)}`,
    };
    expect(() => loadConfig(mainnet)).toThrow(/BASE_RPC_URL: required when PAYMENTS_MODE=mainnet/);
    expect(loadConfig({ ...mainnet, BASE_RPC_URL: 'https://rpc.example' }).payments.mode).toBe('mainnet');
  });

  it('takes GIT_HOST_URL only with the shared database, bucket and secret a process without local state needs', () => {
    const shared = {
      DATABASE_URL: 'postgres://db.example/repo402',
      S3_BUCKET: 'artifacts',
      APP_SECRET: 'ab'.repeat(32),
      PAYMENTS_MODE: 'mainnet',
      FACILITATOR_URL: 'http://devnet:8545/facilitator',
      BASE_RPC_URL: 'http://devnet:8545/rpc',
      PLATFORM_PAYOUT_ADDRESS: `0x${'22'.repeat(20)}`,
    };
    expect(loadConfig({}).gitHostUrl).toBeUndefined();
    expect(loadConfig({ ...shared, GIT_HOST_URL: 'http://git-host:8403/' }).gitHostUrl).toBe(
      'http://git-host:8403',
    );
    const error = (() => {
      try {
        loadConfig({ GIT_HOST_URL: 'http://git-host:8403' });
      } catch (caught) {
        return caught as Error;
      }
    })();
    expect(error?.message).toMatch(/DATABASE_URL: required with GIT_HOST_URL/);
    expect(error?.message).toMatch(/S3_BUCKET: required with GIT_HOST_URL/);
    expect(error?.message).toMatch(/APP_SECRET: required with GIT_HOST_URL/);
    expect(() => loadConfig({ ...shared, GIT_HOST_URL: 'git-host:8403' })).toThrow(
      /GIT_HOST_URL="git-host:8403"/,
    );
  });

  it('takes a payout key on mainnet only', () => {
    const key = `0x${'11'.repeat(32)}`;
    const mainnet = {
      PAYMENTS_MODE: 'mainnet',
      FACILITATOR_URL: 'https://facilitator.example',
      PLATFORM_PAYOUT_ADDRESS: `0x${'22'.repeat(20)}`,
      BASE_RPC_URL: 'https://rpc.example',
      PAYOUT_PRIVATE_KEY: key,
    };
    expect(() => loadConfig({ PAYOUT_PRIVATE_KEY: key })).toThrow(/PAYOUT_PRIVATE_KEY: only used when/);
    expect(loadConfig(mainnet).payments.payoutPrivateKey).toBe(key);
  });

  it('links transactions to Basescan on mainnet, to nothing on devnet, or to the EXPLORER_TX_URL given', () => {
    const mainnet = {
      PAYMENTS_MODE: 'mainnet',
      FACILITATOR_URL: 'https://facilitator.example',
      PLATFORM_PAYOUT_ADDRESS: `0x${'22'.repeat(20)}`,
      BASE_RPC_URL: 'https://rpc.example',
    };
    expect(loadConfig({}).payments.explorerTxUrl).toBeUndefined();
    expect(loadConfig(mainnet).payments.explorerTxUrl).toBe('https://basescan.org/tx/{tx}');
    const own = 'http://explorer.local:4000/tx/{tx}?chain=base';
    expect(loadConfig({ EXPLORER_TX_URL: own }).payments.explorerTxUrl).toBe(own);
    expect(loadConfig({ ...mainnet, EXPLORER_TX_URL: own }).payments.explorerTxUrl).toBe(own);
  });

  describe('testnet: staging on Base Sepolia', () => {
    const payout = `0x${'22'.repeat(20)}`;
    const testnet = {
      PAYMENTS_MODE: 'testnet',
      PLATFORM_PAYOUT_ADDRESS: payout,
      BASE_RPC_URL: 'https://rpc.example',
    };

    it("pays on eip155:84532 in Circle's test USDC through x402's public facilitator, linking Sepolia Basescan", () => {
      const { payments, advisories } = loadConfig(testnet);
      expect(payments).toMatchObject({
        mode: 'testnet',
        network: { name: 'Base Sepolia', chainId: 84532, caip2: 'eip155:84532', testnet: true },
        usdcContract: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
        facilitatorUrl: 'https://x402.org/facilitator',
        platformPayoutAddress: payout,
        explorerTxUrl: 'https://sepolia.basescan.org/tx/{tx}',
      });
      // A rehearsal of production keeps its advisories current, as mainnet does.
      expect(advisories.sync).toBe(true);
      const own = {
        ...testnet,
        FACILITATOR_URL: 'https://facilitator.example',
        EXPLORER_TX_URL: 'https://x.example/{tx}',
      };
      expect(loadConfig(own).payments).toMatchObject({
        facilitatorUrl: 'https://facilitator.example',
        explorerTxUrl: 'https://x.example/{tx}',
      });
    });

    it('leaves devnet and mainnet on Base', () => {
      expect(loadConfig({}).payments).toMatchObject({
        mode: 'devnet',
        network: BASE,
        usdcContract: BASE.usdc,
      });
      const mainnet = loadConfig({
        ...testnet,
        PAYMENTS_MODE: 'mainnet',
        FACILITATOR_URL: 'https://f.example',
      });
      expect(mainnet.payments).toMatchObject({ network: BASE, usdcContract: BASE.usdc });
      expect(() => loadConfig({ ...testnet, PAYMENTS_MODE: 'mainnet' })).toThrow(
        /FACILITATOR_URL: required when PAYMENTS_MODE=mainnet/,
      );
    });

    it('needs a payout address and a chain reader, as mainnet does', () => {
      expect(() => loadConfig({ PAYMENTS_MODE: 'testnet' })).toThrow(
        /PLATFORM_PAYOUT_ADDRESS: required when PAYMENTS_MODE=testnet[\s\S]*BASE_RPC_URL: required when PAYMENTS_MODE=testnet/,
      );
      const key = `0x${'11'.repeat(32)}`;
      expect(loadConfig({ ...testnet, PAYOUT_PRIVATE_KEY: key }).payments.payoutPrivateKey).toBe(key);
    });

    it("refuses the other network's USDC: Base's on testnet, Base Sepolia's on mainnet", () => {
      expect(() => loadConfig({ ...testnet, USDC_CONTRACT: BASE.usdc.toLowerCase() })).toThrow(
        `USDC_CONTRACT: ${BASE.usdc.toLowerCase()} is Base's USDC, but this PAYMENTS_MODE pays on Base Sepolia (eip155:84532), whose USDC is ${BASE_SEPOLIA.usdc}`,
      );
      const mainnet = { ...testnet, PAYMENTS_MODE: 'mainnet', FACILITATOR_URL: 'https://f.example' };
      expect(() => loadConfig({ ...mainnet, USDC_CONTRACT: BASE_SEPOLIA.usdc })).toThrow(
        /USDC_CONTRACT: .* is Base Sepolia's USDC, but this PAYMENTS_MODE pays on Base \(eip155:8453\)/,
      );
      // Any other token is the operator's choice.
      const other = `0x${'33'.repeat(20)}`;
      expect(loadConfig({ ...testnet, USDC_CONTRACT: other }).payments.usdcContract).toBe(other);
    });

    it('may back a split tier (GIT_HOST_URL), which the in-process devnet may not', () => {
      const shared = {
        GIT_HOST_URL: 'http://git-host.internal:8403',
        DATABASE_URL: 'postgres://u@h:5432/db',
        S3_BUCKET: 'zips',
        APP_SECRET: 'ab'.repeat(32),
      };
      expect(loadConfig({ ...testnet, ...shared }).gitHostUrl).toBe('http://git-host.internal:8403');
      expect(() => loadConfig(shared)).toThrow(/PAYMENTS_MODE: processes sharing a git host share one chain/);
    });
  });

  it('stops cut workers after CUT_WORKER_TIMEOUT_SECONDS, within the cut job expiry', () => {
    expect(loadConfig({}).cutWorkerTimeoutMs).toBe(600_000);
    expect(loadConfig({ CUT_WORKER_TIMEOUT_SECONDS: '120' }).cutWorkerTimeoutMs).toBe(120_000);
    for (const bad of ['0', '901', 'ten']) {
      expect(() => loadConfig({ CUT_WORKER_TIMEOUT_SECONDS: bad })).toThrow(/CUT_WORKER_TIMEOUT_SECONDS=/);
    }
  });

  it('names every bad variable at once', () => {
    expect(() => loadConfig({ PORT: 'x', SSH_PORT: 'y' })).toThrow(/PORT=.*\n.*SSH_PORT=/s);
  });

  describe('the GitHub App (Rail A)', () => {
    const PEM = '-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n';
    const app = { GITHUB_APP_ID: '12', GITHUB_WEBHOOK_SECRET: 'a-webhook-secret-of-some-length' };

    it('is off unless configured, and then takes all of id, key and secret', () => {
      expect(loadConfig({}).github).toBeUndefined();
      expect(() => loadConfig({ GITHUB_APP_ID: '12' })).toThrow(
        /GITHUB_APP_PRIVATE_KEY or GITHUB_APP_PRIVATE_KEY_PATH: required.*\n.*GITHUB_WEBHOOK_SECRET: required/s,
      );
      const config = loadConfig({ ...app, GITHUB_APP_PRIVATE_KEY: PEM.replaceAll('\n', '\\n') });
      expect(config.github).toEqual({
        appId: 12,
        privateKey: PEM,
        webhookSecret: app.GITHUB_WEBHOOK_SECRET,
        apiUrl: 'https://api.github.com',
        allowHttpGit: false,
      });
    });

    it('reads the key from a file, for GitHub Enterprise Server too', async () => {
      const { mkdtemp, writeFile } = await import('node:fs/promises');
      const os = await import('node:os');
      const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'repo402-key-')), 'app.pem');
      await writeFile(file, PEM);
      const config = loadConfig({
        ...app,
        GITHUB_APP_PRIVATE_KEY_PATH: file,
        GITHUB_API_URL: 'https://git.example.com/api/v3/',
      });
      expect(config.github).toMatchObject({ privateKey: PEM, apiUrl: 'https://git.example.com/api/v3' });
      expect(() => loadConfig({ ...app, GITHUB_APP_PRIVATE_KEY_PATH: `${file}.missing` })).toThrow(
        /GITHUB_APP_PRIVATE_KEY_PATH: cannot read it/,
      );
    });

    it('never echoes the key or the webhook secret', () => {
      let message = '';
      try {
        loadConfig({
          GITHUB_APP_ID: '12',
          GITHUB_APP_PRIVATE_KEY: 'not a pem secret',
          GITHUB_WEBHOOK_SECRET: 'short',
        });
      } catch (caught) {
        message = (caught as Error).message;
      }
      expect(message).toContain('GITHUB_APP_PRIVATE_KEY=(value hidden)');
      expect(message).toContain('GITHUB_WEBHOOK_SECRET=(value hidden)');
      expect(message).not.toContain('not a pem secret');
    });
  });
});
