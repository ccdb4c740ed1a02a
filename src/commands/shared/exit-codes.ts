// The exit-code table lives in core (the HTTP server maps the same codes); commands import it from here.
export * from '../../core/exit-codes.js';
