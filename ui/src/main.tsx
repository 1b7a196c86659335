import '@mantine/core/styles.css';
import './console.css';
import { Badge, createTheme, Loader, MantineProvider, Modal } from '@mantine/core';
import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { App } from './App';
import { queries } from './boot';

// The page's CSP allows <style> elements only with this response's nonce (src/http/console.ts).
const nonce = document.querySelector<HTMLMetaElement>('meta[name="csp-nonce"]')?.content ?? '';
// react-remove-scroll (Mantine's modals) adds its <style> with the nonce it finds here (get-nonce).
(globalThis as { __webpack_nonce__?: string }).__webpack_nonce__ = nonce;
// Shade 9 keeps white-on-color and color-on-white text above WCAG AA contrast (axe checks it).
const theme = createTheme({
  primaryColor: 'blue',
  primaryShade: 9,
  defaultRadius: 'sm',
  // Light badges (black text on a tint, console.css): legible at the smallest sizes.
  // Every loader is a named status: a plain span may not carry the aria-label each one has (axe).
  // Modals' close button is an icon: it gets a name.
  components: {
    Badge: Badge.extend({ defaultProps: { variant: 'light' } }),
    Loader: Loader.extend({ defaultProps: { role: 'status' } }),
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close' } } }),
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme} getStyleNonce={() => nonce} defaultColorScheme="light">
      <QueryClientProvider client={queries}>
        <BrowserRouter>
          <App />
        </BrowserRouter>
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
