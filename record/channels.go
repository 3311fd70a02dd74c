package record

// MaxAccessToken is the longest access token accepted, in bytes.
const MaxAccessToken = 2048
