/*
 * What mingw-w64 10's WFP headers lack: the layer and condition GUIDs and
 * the persistence flags the closed account's loopback filters use.  Values
 * are those of the Windows SDK's fwpmu.h and fwpmtypes.h.  Include after
 * <fwpmu.h>; every name is guarded so a newer mingw that has it wins.
 */
#ifndef OWS_WFP_COMPAT_H
#define OWS_WFP_COMPAT_H

#include <guiddef.h>

#define OWS__WFP_GUID(name, l, w1, w2, b1, b2, b3, b4, b5, b6, b7, b8) \
	static const GUID name = {l, w1, w2, {b1, b2, b3, b4, b5, b6, b7, b8}}

/* c38d57d1-05a7-4c33-904f-7fbceee60e82 */
OWS__WFP_GUID(OWS_FWPM_LAYER_ALE_AUTH_CONNECT_V4, 0xc38d57d1, 0x05a7, 0x4c33, 0x90, 0x4f,
	      0x7f, 0xbc, 0xee, 0xe6, 0x0e, 0x82);
/* 4a72393b-319f-44bc-84c3-ba54dcb3b6b4 */
OWS__WFP_GUID(OWS_FWPM_LAYER_ALE_AUTH_CONNECT_V6, 0x4a72393b, 0x319f, 0x44bc, 0x84, 0xc3,
	      0xba, 0x54, 0xdc, 0xb3, 0xb6, 0xb4);
/* c35a604d-d22b-4e1a-91b4-68f674ee674b */
OWS__WFP_GUID(OWS_FWPM_CONDITION_IP_REMOTE_PORT, 0xc35a604d, 0xd22b, 0x4e1a, 0x91, 0xb4,
	      0x68, 0xf6, 0x74, 0xee, 0x67, 0x4b);
/* b235ae9a-1d64-49b8-a44c-5ff3d9095045 */
OWS__WFP_GUID(OWS_FWPM_CONDITION_IP_REMOTE_ADDRESS, 0xb235ae9a, 0x1d64, 0x49b8, 0xa4, 0x4c,
	      0x5f, 0xf3, 0xd9, 0x09, 0x50, 0x45);
/* af043a0a-b34d-4f86-979c-c90371af6e66 */
OWS__WFP_GUID(OWS_FWPM_CONDITION_ALE_USER_ID, 0xaf043a0a, 0xb34d, 0x4f86, 0x97, 0x9c,
	      0xc9, 0x03, 0x71, 0xaf, 0x6e, 0x66);

/* 632ce23b-5167-435c-86d7-e903684aa80c */
OWS__WFP_GUID(OWS_FWPM_CONDITION_FLAGS, 0x632ce23b, 0x5167, 0x435c, 0x86, 0xd7, 0xe9, 0x03,
	      0x68, 0x4a, 0xa8, 0x0c);

#ifndef FWPM_FILTER_FLAG_PERSISTENT
#define FWPM_FILTER_FLAG_PERSISTENT 0x00000001
#endif
#ifndef FWPM_PROVIDER_FLAG_PERSISTENT
#define FWPM_PROVIDER_FLAG_PERSISTENT 0x00000001
#endif
#ifndef FWPM_SUBLAYER_FLAG_PERSISTENT
#define FWPM_SUBLAYER_FLAG_PERSISTENT 0x00000001
#endif
#ifndef FWPM_SESSION_FLAG_DYNAMIC
#define FWPM_SESSION_FLAG_DYNAMIC 0x00000001
#endif

#endif /* OWS_WFP_COMPAT_H */
