/*
 * bcryptprimitives.dll for Wine 8.0, which lacks it. FOR TESTS UNDER WINE
 * ONLY: never shipped, never installed on Windows (every Windows that Rust
 * supports has the real one).
 *
 * Rust's standard library (1.78 and newer) takes its random numbers, e.g.
 * the keys of every HashMap, from ProcessPrng in bcryptprimitives.dll, so a
 * Rust program compiled for Windows does not even start under a Wine that
 * lacks the DLL. This shim exports ProcessPrng and fills the buffer from the
 * system's preferred RNG through BCryptGenRandom, which Wine implements.
 * packaging/wine-check.sh builds it with mingw-w64 and puts it in the Wine
 * prefix's system32, never beside the binary under test.
 */
#include <windows.h>
#include <bcrypt.h>

/* The real ProcessPrng always returns TRUE; it cannot fail. This one asks
 * for at most ULONG_MAX bytes at a time and reports a failure as FALSE
 * (Rust's std then panics with a clear message rather than using bad bytes). */
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size)
{
    while (size > 0) {
        ULONG chunk = size > 0xFFFFFFFFu ? 0xFFFFFFFFu : (ULONG)size;
        if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, data, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG)))
            return FALSE;
        data += chunk;
        size -= chunk;
    }
    return TRUE;
}
