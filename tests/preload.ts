// Quiet logs and fast gateway heartbeats for every test process.
process.env.LOG_LEVEL ??= 'silent'
process.env.GATEWAY_HEARTBEAT_MS ??= '1000'
process.env.NEW_LOGIN_LOCATION_CHECK ??= 'false'
