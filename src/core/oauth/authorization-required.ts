// The error a caller (the runtime, a tool call) gets when a principal must first authorize a provider.
import { HangarError } from '../errors.js';

/**
 * The principal has no usable token for the provider; `authorizationUrl` starts the flow, which makes
 * the token of agent `agentId` (null: the principal's default token).
 */
export class OAuthAuthorizationRequired extends HangarError {
  constructor(
    readonly providerId: string,
    readonly sessionId: string,
    readonly authorizationUrl: string,
    readonly agentId: string | null = null,
  ) {
    super(
      'oauth_authorization_required',
      `authorize OAuth provider "${providerId}"${agentId ? ` for agent ${agentId}` : ''} first: open ${authorizationUrl} (authorization session ${sessionId})`,
    );
  }
}

/** The value of the LangGraph interrupt that pauses a run until the principal has authorized. */
export interface OAuthInterruptValue {
  type: 'oauth_authorization_required';
  provider_id: string;
  session_id: string;
  authorization_url: string;
  /**
   * The agent whose token the authorization makes (the run's agent: its token is the first its runs
   * look for), or null for the principal's default token.
   */
  agent_id: string | null;
  /** The tool whose call needs the authorization. */
  tool_name: string;
}

/** The interrupt value for `error`, raised while calling `toolName`. */
export function oauthInterruptValue(error: OAuthAuthorizationRequired, toolName: string): OAuthInterruptValue {
  return {
    type: 'oauth_authorization_required',
    provider_id: error.providerId,
    session_id: error.sessionId,
    authorization_url: error.authorizationUrl,
    agent_id: error.agentId,
    tool_name: toolName,
  };
}
