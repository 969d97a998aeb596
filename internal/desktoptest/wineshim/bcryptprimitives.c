/*
 * bcryptprimitives.dll for Wine 8, which lacks it: Go's Windows runtime
 * (since 1.22) calls ProcessPrng at start and dies without it. This fills
 * the buffer from RtlGenRandom (advapi32's SystemFunction036), which Wine
 * has. Wine 10 ships the real DLL, so the harness installs this only where
 * the prefix has none.
 *
 * x86_64-w64-mingw32-gcc -shared -s -o bcryptprimitives.dll bcryptprimitives.c -ladvapi32
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
	while (length > 0) {
		ULONG n = length > 0x40000000 ? 0x40000000 : (ULONG)length;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		length -= n;
	}
	return TRUE;
}
