//! The protocol's numbers, each named once: commands, the first bytes of the server's
//! packets, capability and status flags, column types, and the bytes of
//! caching_sha2_password's exchange.

/// Commands (the first byte of a command packet).
pub const COM_QUIT: u8 = 0x01;
pub const COM_QUERY: u8 = 0x03;
pub const COM_STMT_PREPARE: u8 = 0x16;
pub const COM_STMT_EXECUTE: u8 = 0x17;

/// The first byte of a server's packet.
pub const OK: u8 = 0x00;
pub const ERR: u8 = 0xFF;
/// EOF, and an auth switch request during the login.
pub const EOF: u8 = 0xFE;
/// A LOAD DATA LOCAL request (a result), and NULL in a text row.
pub const LOCAL_INFILE: u8 = 0xFB;
pub const NULL: u8 = 0xFB;
/// More data for the auth plugin during the login.
pub const AUTH_MORE_DATA: u8 = 0x01;

/// caching_sha2_password: after AUTH_MORE_DATA, the fast path's verdict or the call for the
/// full one; the client's request for the server's RSA key.
pub const SHA2_FAST_OK: u8 = 0x03;
pub const SHA2_FULL_AUTH: u8 = 0x04;
pub const SHA2_REQUEST_KEY: u8 = 0x02;

/// Capability flags.
pub const CLIENT_LONG_PASSWORD: u32 = 0x1;
pub const CLIENT_CONNECT_WITH_DB: u32 = 0x8;
pub const CLIENT_PROTOCOL_41: u32 = 0x200;
pub const CLIENT_SSL: u32 = 0x800;
pub const CLIENT_TRANSACTIONS: u32 = 0x2000;
pub const CLIENT_SECURE_CONNECTION: u32 = 0x8000;
pub const CLIENT_MULTI_STATEMENTS: u32 = 0x1_0000;
pub const CLIENT_MULTI_RESULTS: u32 = 0x2_0000;
pub const CLIENT_PS_MULTI_RESULTS: u32 = 0x4_0000;
pub const CLIENT_PLUGIN_AUTH: u32 = 0x8_0000;
/// The handshake response's auth data length-encoded (any length), not one length byte.
pub const CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 0x20_0000;

/// A status flag of OK and EOF: another result follows.
pub const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;

/// Column types a statement's parameters are sent as.
pub const MYSQL_TYPE_LONGLONG: u8 = 0x08;
pub const MYSQL_TYPE_STRING: u8 = 0xFE;
