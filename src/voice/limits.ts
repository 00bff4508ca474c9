// Fixed limits of lobby calls (the configurable ones are VOICE_* in config.ts).

/** Lobbies one op 17 may name; more is not a client, it is abuse. */
export const MAX_STATES = 25
/** Calls one user may be in at once, over all their sessions (each holds a peer connection and its UDP sockets). */
export const MAX_CALLS_PER_USER = 5
/** The Gateway takes 15 KiB frames: an answer cannot be longer. */
export const MAX_SDP_CHARS = 15 * 1024
export const MAX_CANDIDATE_CHARS = 512
/** Remote candidates one peer connection takes (each makes the server send connectivity checks somewhere). */
export const MAX_CANDIDATES = 20
/** From joining (or an offer) to a connected peer (or its answer). */
export const CONNECT_TIMEOUT_MS = 20_000
/** A connection that lost ICE consent this long is over. */
export const DISCONNECTED_GRACE_MS = 15_000
/** How often calls are checked for idleness, timeouts and members who left. */
export const SWEEP_EVERY_MS = 1000
