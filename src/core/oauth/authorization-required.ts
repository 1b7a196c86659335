// The error a caller (the runtime, a tool call) gets when a principal must first authorize a provider.
import { HangarError } from '../errors.js';

/** The principal has no usable token for the provider; `authorizationUrl` starts the flow. */
export class OAuthAuthorizationRequired extends HangarError {
  constructor(
    readonly providerId: string,
    readonly sessionId: string,
    readonly authorizationUrl: string,
  ) {
    super(
      'oauth_authorization_required',
      `authorize OAuth provider "${providerId}" first: open ${authorizationUrl} (authorization session ${sessionId})`,
    );
  }
}
