/**
 * Kept at this path only for keys.ts and script-codes.ts, which import
 * ./names.js (being reworked, not to be edited now): every other module
 * imports src/model/names.ts and src/text/quote.ts. It goes once those
 * import the model directly; test/structure/imports.test.ts lets no other
 * module import it.
 */
export * from '../model/names.js';
export * from '../text/quote.js';
