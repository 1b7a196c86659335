// Tool server URLs are compared after stripping trailing slashes (SPEC: interrupt_config keys, tools[].mcp_server_url).

/** The canonical form of a tool server URL: trailing slashes stripped. */
export function normalizeServerUrl(url: string): string {
  return url.replace(/\/+$/, '');
}

/** Whether `url` is an absolute http(s) URL. */
export function isHttpUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.hostname !== '';
  } catch {
    return false;
  }
}
