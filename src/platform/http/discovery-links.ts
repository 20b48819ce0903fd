/**
 * Where a program that lands on any page of the site learns to use the service: the API catalog
 * (RFC 9727), the buying skill (SKILL.md) and the list of x402 resources. Every HTML page names
 * all three in its `Link` header (RFC 8288), and the catalog lists them.
 */

export const API_CATALOG_PATH = '/.well-known/api-catalog';
export const SKILL_NAME = 'buy-a-repo';
export const SKILL_PATH = `/.well-known/agent-skills/${SKILL_NAME}/SKILL.md`;
export const X402_DISCOVERY_PATH = '/.well-known/x402';

export const API_CATALOG_LINK = `<${API_CATALOG_PATH}>; rel="api-catalog"`;

/** The `Link` header of every page. */
export const SITE_LINKS = [
  API_CATALOG_LINK,
  `<${SKILL_PATH}>; rel="service-doc"; type="text/markdown"; title="How an agent buys (Agent Skill)"`,
  `<${X402_DISCOVERY_PATH}>; rel="describedby"; type="application/json"; title="x402 resources on sale"`,
].join(', ');
