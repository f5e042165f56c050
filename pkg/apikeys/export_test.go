package apikeys

// The key lookup's database call and its input, for the SQL tests of package apikeys_test.
var LookupCall = lookupCall

type LookupInput = lookupInput
